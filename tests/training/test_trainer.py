"""bert_tf.training.Trainer: its options, on the original's trajectory."""

import json
import logging
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from bert_tf.checkpoints.huggingface.reader import HuggingFaceFolder
from bert_tf.models.classifier import BertClassifier
from bert_tf.models.feature_tagger import BertFeatureTagger
from bert_tf.objectives.classification import ClassificationObjective
from bert_tf.training.trainer import TrainingOptions, create_trainer
from tests.support import reference_training
from tests.support.helpers import (ORIGINAL_TINY_TRAIN, PROJECT_DIR,
                                   assert_checkpoints_close, read_scalars,
                                   tiny_config)

ORIGINAL_CKPT_10 = os.path.join(ORIGINAL_TINY_TRAIN, "model.ckpt-10")


@pytest.mark.shared
@pytest.mark.parametrize("options", [
    {"gradient_accumulation_steps": 3},
    {"use_xla": True},
], ids=["accumulation", "xla"])
def test_options_keep_the_original_trajectory(tmp_path, options):
  """Three micro-batches of one example, or XLA, give the original's
  update: the loss is normalised over the whole batch, not per part."""
  reference_training.train(str(tmp_path), **options)
  assert_checkpoints_close(str(tmp_path / "model.ckpt-10"), ORIGINAL_CKPT_10,
                           atol=1e-4)


@pytest.mark.shared
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_mixed_precision_follows_float32_with_float32_state(tmp_path, dtype):
  """Ten steps under --dtype=bfloat16 (float16) from the original's
  checkpoint: the loss before each step within 2^-8 (0.39%) of the
  original's float32 one, and variables, Adam slots and checkpoint in
  float32.

  2^-8 is the relative error of one bfloat16 product (each factor rounded
  to 8 significant bits, 2^-9 apiece), so the most a loss can move when
  every rounding in a forward pass points the same way; rounding errors
  of opposite signs cancel, and Adam's update m / sqrt(v) does not grow a
  gradient's relative error. Measured: bfloat16 0.05% at most over the
  ten steps (0.01% at step 1), float16 0.01%. A run computing something
  else leaves the bound: dropout 0.1 left on 2.7%, relu for gelu 5.6%,
  bfloat16 variables and slots (Keras' "bfloat16" policy) a thousandfold
  loss."""
  trainer = reference_training.train(str(tmp_path), dtype=dtype,
                                     iterations_per_loop=1)
  assert trainer.model.encoder.compute_dtype == dtype
  if dtype == "float16":
    assert isinstance(trainer._updater, keras.optimizers.LossScaleOptimizer)
  with open(os.path.join(ORIGINAL_TINY_TRAIN, "trajectory.json")) as reader:
    expected = json.load(reader)["losses_before_each_step"]
  losses = read_scalars(str(tmp_path), "loss")
  np.testing.assert_allclose([losses[step] for step in range(1, 11)],
                             expected, rtol=2 ** -8, atol=0)
  slots = [slot for variable in trainer.model.trainable_variables
           for slot in trainer.optimizer.slots(variable)]
  assert {variable.dtype for variable in trainer.model.weights + slots} == {
      "float32"}
  reader = tf.train.load_checkpoint(str(tmp_path / "model.ckpt-10"))
  dtypes = reader.get_variable_to_dtype_map()
  assert {dtypes[name] for name in dtypes if name != "global_step"} == {
      tf.float32}
  assert sorted(dtypes) == sorted(
      tf.train.load_checkpoint(ORIGINAL_CKPT_10).get_variable_to_dtype_map())


@pytest.mark.shared
def test_mirrored_on_two_devices_equals_one_device(tmp_path):
  """Same global batch of 4: two replicas of 2 give one device's weights."""
  for strategy in ("one_device", "mirrored"):
    result = subprocess.run(
        [sys.executable, "-m", "tests.support.reference_training",
         str(tmp_path / strategy), strategy, "4"],
        cwd=PROJECT_DIR, capture_output=True, text=True, timeout=600,
        check=False)
    assert result.returncode == 0, result.stderr
    assert f"replicas={2 if strategy == 'mirrored' else 1}" in result.stdout
  assert_checkpoints_close(str(tmp_path / "mirrored" / "model.ckpt-10"),
                           str(tmp_path / "one_device" / "model.ckpt-10"),
                           atol=1e-5)


def test_batch_must_split_over_replicas_and_micro_batches(tmp_path):
  with pytest.raises(ValueError, match="gradient_accumulation_steps=2"):
    reference_training.train(str(tmp_path), gradient_accumulation_steps=2)


def trainer_from(init_checkpoint, build_model, output_dir):
  """A one-device trainer of build_model() that starts from
  init_checkpoint."""
  return create_trainer(
      tf.distribute.OneDeviceStrategy("/cpu:0"), build_model,
      ClassificationObjective(), str(output_dir),
      TrainingOptions(num_train_steps=1), 1e-3, 0,
      init_checkpoint=init_checkpoint, train_batch_size=2)


def warnings_of(caplog):
  return [record.getMessage() for record in caplog.records
          if record.levelno == logging.WARNING]


def test_an_init_checkpoint_head_of_other_labels_is_new_with_a_warning(
    tmp_path, caplog):
  """A 3-label folder for a 2-label model: its encoder loads, the model
  keeps a new head, and a warning names both counts (as from_pretrained
  starts a new head)."""
  folder = os.path.join(PROJECT_DIR, "tests", "fixtures", "huggingface",
                        "transformers5_classifier")
  reader = HuggingFaceFolder(folder)
  with caplog.at_level(logging.WARNING):
    trainer = trainer_from(folder, lambda: BertClassifier(
        reader.config, num_labels=2), tmp_path)
  assert trainer.global_step == 0
  assert warnings_of(caplog) == [
      f"BertClassifier: output_weights, output_bias start at random, not "
      f"loaded from {folder}: its head has 3 labels and the model's 2 "
      f"(output_weights [3, 32] against [2, 32]); train the model on a task "
      f"before using its predictions"]
  model = trainer.model
  assert model.output_head.output_weights.shape == (2, 32)
  np.testing.assert_array_equal(
      model.encoder.embeddings.word_embeddings.numpy(),
      reader.get_tensor("bert/embeddings/word_embeddings"))


def test_a_head_of_other_widths_is_named_by_its_shapes(tmp_path, caplog):
  """A feature-based tagger's head of other LSTM units, the same 9 tags:
  the warning names the shapes, not a count of labels."""

  def tagger(lstm_units):
    return BertFeatureTagger(tiny_config(), 9, (1,), "concat", lstm_units)

  bert_tf.save_checkpoint(tagger(4), str(tmp_path / "tagger.ckpt"))
  with caplog.at_level(logging.WARNING):
    trainer_from(str(tmp_path / "tagger.ckpt"), lambda: tagger(8),
                 tmp_path / "run")
  [warning] = warnings_of(caplog)
  assert warning.endswith(
      f"start at random, not loaded from {tmp_path}/tagger.ckpt: its head "
      f"is of other shapes: ner/output_weights [9, 8] against the model's "
      f"[9, 16] (12 more differ); train the model on a task before using "
      f"its predictions")


def test_lora_trains_the_weights_the_init_checkpoint_lacks_and_resumes(
    tmp_path):
  """With lora_rank, the weights a BertForMaskedLM folder lacks (its
  pooler) train beside the adapters and the head, the rest of the encoder
  frozen; resumed, the run trains the same weights (those its checkpoint
  holds slots for) from their slots."""
  folder = os.path.join(PROJECT_DIR, "tests", "fixtures", "huggingface",
                        "bert_for_masked_lm")
  config = HuggingFaceFolder(folder).config

  def lora_trainer():
    return create_trainer(
        tf.distribute.OneDeviceStrategy("/cpu:0"),
        lambda: BertClassifier(config, num_labels=2),
        ClassificationObjective(), str(tmp_path),
        TrainingOptions(num_train_steps=1), 1e-3, 0, init_checkpoint=folder,
        train_batch_size=2, lora_rank=2)

  def trained(model):
    return [weight.path for weight in model.encoder.trainable_weights
            if "lora_kernel" not in weight.path]

  trainer = lora_trainer()
  pooler = trainer.model.encoder.pooler
  assert trained(trainer.model) == [pooler.kernel.path, pooler.bias.path]
  ids = np.ones((2, 8), np.int32)
  trainer.train(tf.data.Dataset.from_tensors({
      "input_ids": ids, "input_mask": ids, "segment_ids": 0 * ids,
      "label_ids": np.array([0, 1], np.int32),
      "is_real_example": ids[:, 0]}))
  resumed = lora_trainer()
  assert resumed.global_step == 1
  assert trained(resumed.model) == trained(trainer.model)
  for slot, saved in zip(
      resumed.optimizer.slots(resumed.model.encoder.pooler.kernel),
      trainer.optimizer.slots(pooler.kernel)):
    assert np.any(saved.numpy())
    np.testing.assert_array_equal(slot.numpy(), saved.numpy())
