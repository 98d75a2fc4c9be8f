"""bert_tf.training.Trainer: its options, on the original's trajectory."""

import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from tests.support import reference_training
from tests.support.helpers import (ORIGINAL_TINY_TRAIN, PROJECT_DIR,
                                   assert_checkpoints_close, read_scalars)

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
def test_mixed_precision_trains_float32_checkpoints(tmp_path, dtype):
  trainer = reference_training.train(str(tmp_path), dtype=dtype)
  assert trainer.model.encoder.compute_dtype == dtype
  if dtype == "float16":
    assert isinstance(trainer._updater, keras.optimizers.LossScaleOptimizer)
  losses = read_scalars(str(tmp_path), "loss")
  assert losses[10] < losses[5] - 0.5
  reader = tf.train.load_checkpoint(str(tmp_path / "model.ckpt-10"))
  dtypes = reader.get_variable_to_dtype_map()
  assert {dtypes[name] for name in dtypes if name != "global_step"} == {
      tf.float32}
  assert sorted(dtypes) == sorted(
      tf.train.load_checkpoint(ORIGINAL_CKPT_10).get_variable_to_dtype_map())
  # bfloat16/float16 compute: close to the float32 trajectory, not equal
  np.testing.assert_allclose(
      reader.get_tensor("bert/pooler/dense/kernel"),
      tf.train.load_checkpoint(ORIGINAL_CKPT_10).get_tensor(
          "bert/pooler/dense/kernel"), atol=0.02)


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
