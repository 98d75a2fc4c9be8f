"""BertMultipleChoice: the paper's SWAG model and its checkpoint names."""

import numpy as np
import tensorflow as tf

import bert_tf
from tests.support.helpers import tiny_config
from tests.support.keras_harness import run_model_test


def choices():
  """Two examples of four choices: [2, 4, 16] inputs, padded at times."""
  rng = np.random.default_rng(0)
  input_mask = (np.arange(16) < rng.integers(8, 17, (2, 4, 1))).astype(
      np.int32)
  return {"input_ids": rng.integers(5, 99, (2, 4, 16)).astype(np.int32)
                       * input_mask,
          "input_mask": input_mask,
          "segment_ids": (np.arange(16) >= 6).astype(np.int32) * input_mask}


def test_each_choice_is_scored_on_its_own():
  # Weights of the original's scale (0.02) can leave a changed choice's
  # logit within float error of the old one, as they did once in CI.
  model = bert_tf.models.BertMultipleChoice(tiny_config(initializer_range=0.2))
  inputs = choices()
  outputs = model(inputs)
  assert outputs["logits"].shape == (2, 4)
  np.testing.assert_allclose(np.sum(outputs["probabilities"], -1), 1.0,
                             atol=1e-6)
  # A choice's logit is the one its own sequence gets alone.
  flat = {name: value.reshape(8, 16) for name, value in inputs.items()}
  alone = model.choice_head(model.encoder(flat)["pooled_output"])
  np.testing.assert_allclose(outputs["logits"], np.reshape(alone, (2, 4)),
                             atol=1e-5)
  changed = {name: value.copy() for name, value in inputs.items()}
  changed["input_ids"][1, 2, 1:4] = [5, 6, 7]
  logits = model(changed)["logits"]
  np.testing.assert_allclose(logits[0], outputs["logits"][0], atol=1e-6)
  assert abs(logits[1, 2] - outputs["logits"][1, 2]) > 1e-3


def test_checkpoint_names_are_plain_as_run_classifiers(tmp_path):
  model = bert_tf.models.BertMultipleChoice(tiny_config())
  path = bert_tf.save_checkpoint(model, str(tmp_path / "model.ckpt-1"))
  shapes = dict(tf.train.list_variables(path))
  assert shapes["output_weights"] == [1, 32]
  assert shapes["output_bias"] == [1]
  restored = bert_tf.models.BertMultipleChoice(tiny_config())
  bert_tf.load_checkpoint(restored, path)
  np.testing.assert_allclose(restored(choices())["logits"],
                             model(choices())["logits"], atol=1e-6)
  run_model_test(model, choices())
