import os

import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from bert_tf.optimization import optimizers
from bert_tf.training.checkpoint_manager import CheckpointManager
from tests.support.helpers import (random_inputs, save_listed_checkpoint,
                                   tiny_config)


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
  optimizer = optimizers.create_optimizer(1e-3, 10, 2)
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


def cut_short(directory, name):
  """Truncates a checkpoint's data file, as a full disk or a copy might."""
  path = os.path.join(directory, f"{name}.data-00000-of-00001")
  with open(path, "r+b") as data:
    data.truncate(os.path.getsize(path) // 3)


def test_a_damaged_newest_checkpoint_falls_back_to_the_one_before(tmp_path):
  model, optimizer, manager = make(tiny_config(), str(tmp_path), keep=3)
  train(model, optimizer, 6, manager, save_every=2)
  cut_short(tmp_path, "model.ckpt-6")
  _, resumed_optimizer, resumed = make(tiny_config(), str(tmp_path), keep=3)
  assert resumed.restore_latest() == 4
  assert int(resumed_optimizer.iterations) == 4
  assert resumed.kept == ["model.ckpt-2", "model.ckpt-4"]
  resumed.save(5)  # the index no longer lists the damaged one
  state = tf.train.get_checkpoint_state(str(tmp_path))
  assert state.all_model_checkpoint_paths == [
      str(tmp_path / f"model.ckpt-{step}") for step in (2, 4, 5)]


def test_every_checkpoint_damaged_is_an_error_naming_them(tmp_path):
  model, optimizer, manager = make(tiny_config(), str(tmp_path))
  train(model, optimizer, 4, manager, save_every=2)
  for name in ("model.ckpt-2", "model.ckpt-4"):
    cut_short(tmp_path, name)
  with pytest.raises(ValueError, match="every checkpoint is damaged "
                     "\\(model.ckpt-4, model.ckpt-2\\)"):
    make(tiny_config(), str(tmp_path))[2].restore_latest()


def test_another_models_checkpoint_says_how_to_start_fresh(tmp_path):
  save_listed_checkpoint(bert_tf.BertEncoder(tiny_config()), str(tmp_path),
                         3)
  with pytest.raises(ValueError, match=(
      "model.ckpt-3 is a checkpoint of another model \\(it lacks cls/.* and "
      "4 more\\); to start this run fresh, remove the model.ckpt-\\* and "
      "'checkpoint' files from .* or choose another --output_dir")):
    make(tiny_config(), str(tmp_path))[2].restore_latest()
  with pytest.raises(ValueError, match="another model .*shape"):
    make(tiny_config(hidden_size=16), str(tmp_path))[2].restore_latest()


def test_a_checkpoint_without_slots_is_evaluated_not_trained_on(tmp_path):
  """A run that trained other variables (LoRA's head alone) wrote no slots
  for the rest: evaluating it takes its weights and step without them."""
  model, _, _ = make(tiny_config(), str(tmp_path))
  bert_tf.save_checkpoint(model, str(tmp_path / "model.ckpt-7"),
                          global_step=7)
  (tmp_path / "checkpoint").write_text(
      'model_checkpoint_path: "model.ckpt-7"\n')
  _, optimizer, manager = make(tiny_config(), str(tmp_path))
  assert manager.restore_latest(slots=False) == 7
  assert int(optimizer.iterations) == 7
  with pytest.raises(ValueError, match="optimizer slot .*/adam_m is "
                     "missing"):
    manager.restore_latest()


def test_without_an_index_the_checkpoints_there_are_resumed(tmp_path):
  model, optimizer, manager = make(tiny_config(), str(tmp_path), keep=5)
  train(model, optimizer, 10, manager, save_every=5)
  (tmp_path / "checkpoint").unlink()
  assert make(tiny_config(), str(tmp_path))[2].restore_latest() == 10


def test_saving_removes_a_killed_saves_temporaries(tmp_path):
  model, optimizer, manager = make(tiny_config(), str(tmp_path))
  train(model, optimizer, 1)
  stale = tmp_path / f"model.ckpt-7.tmp-{'0' * 32}"
  for suffix in ("", ".index", ".data-00000-of-00001"):
    (tmp_path / f"{stale.name}{suffix}").write_bytes(b"half")
  (tmp_path / "notes.tmp-mine").write_text("the user's")
  manager.save(8)
  assert sorted(os.listdir(tmp_path)) == [
      "checkpoint", "model.ckpt-8.data-00000-of-00001", "model.ckpt-8.index",
      "notes.tmp-mine"]


def test_the_weights_a_run_trained_are_those_with_slots(tmp_path):
  """What a resumed LoRA run trains again: the weights the newest readable
  checkpoint holds slots for (one whose index is damaged is passed over,
  as restore_latest passes over it); none without a checkpoint."""
  model, optimizer, manager = make(tiny_config(), str(tmp_path), keep=3)
  assert manager.trained_weights() == []
  for weight in model.encoder.weights:
    weight.trainable = "pooler" in weight.path
  train(model, optimizer, 2, manager, save_every=1)
  (tmp_path / "model.ckpt-2.index").write_bytes(b"damaged")
  resumed_model, _, resumed = make(tiny_config(), str(tmp_path), keep=3)
  assert sorted(resumed.trained_weights()) == sorted(
      ours.path for ours, theirs in zip(resumed_model.weights, model.weights)
      if theirs.trainable)
  assert any("pooler" in path for path in resumed.trained_weights())
