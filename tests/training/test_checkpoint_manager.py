import os

import numpy as np
import tensorflow as tf

import bert_tf
from bert_tf.training import optimization
from bert_tf.training.checkpoint_manager import CheckpointManager
from tests.helpers import random_inputs, tiny_config


def train(model, optimizer, steps, manager=None, save_every=None, start=0):
  inputs = random_inputs(model.config, seed=1)
  labels = {"masked_lm_ids": np.ones((3, 4), np.int32),
            "masked_lm_weights": np.ones((3, 4), np.float32),
            "next_sentence_labels": np.zeros((3, 1), np.int32)}
  variables = model.trainable_variables
  for step in range(start + 1, steps + 1):
    with tf.GradientTape() as tape:
      loss = bert_tf.pretraining_loss(model(inputs, training=True), labels)
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
    if manager and step % save_every == 0:
      manager.save(step)


def make(config, directory, keep=2):
  model = bert_tf.BertPretrainer(config)
  optimizer = optimization.create_optimizer(model, 1e-3, 10, 2)
  return model, optimizer, CheckpointManager(model, optimizer, directory,
                                             keep_checkpoint_max=keep)


def test_keeps_the_newest_and_writes_the_index(tmp_path):
  model, optimizer, manager = make(tiny_config(), str(tmp_path))
  train(model, optimizer, 6, manager, save_every=2)
  assert sorted(os.listdir(tmp_path)) == [
      "checkpoint", "model.ckpt-4.data-00000-of-00001", "model.ckpt-4.index",
      "model.ckpt-6.data-00000-of-00001", "model.ckpt-6.index"]
  assert (tmp_path / "checkpoint").read_text() == (
      'model_checkpoint_path: "model.ckpt-6"\n'
      'all_model_checkpoint_paths: "model.ckpt-4"\n'
      'all_model_checkpoint_paths: "model.ckpt-6"\n')
  assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-6")


def test_resuming_continues_exactly(tmp_path):
  config = tiny_config(hidden_dropout_prob=0.0,
                       attention_probs_dropout_prob=0.0)
  straight, straight_optimizer, _ = make(config, str(tmp_path / "unused"))
  interrupted, optimizer, manager = make(config, str(tmp_path / "run"))
  straight.set_weights(interrupted.get_weights())
  train(straight, straight_optimizer, 6)
  train(interrupted, optimizer, 4, manager, save_every=2)

  resumed, resumed_optimizer, resumed_manager = make(config,
                                                     str(tmp_path / "run"))
  assert resumed_manager.restore_latest() == 4
  assert int(resumed_optimizer.iterations) == 4
  train(resumed, resumed_optimizer, 6, start=4)
  for ours, theirs in zip(resumed.weights, straight.weights):
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-6)


def test_nothing_to_resume_from(tmp_path):
  _, _, manager = make(tiny_config(), str(tmp_path))
  assert manager.restore_latest() == 0
