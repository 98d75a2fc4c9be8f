"""BertClassifier: run_classifier's model and its checkpoint names."""

import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from tests.support.helpers import ORIGINAL_TINY, random_inputs, tiny_config
from tests.support.keras_harness import run_model_test

INPUT_NAMES = ("input_ids", "input_mask", "segment_ids")


@pytest.mark.shared
def test_fine_tuning_starts_from_the_released_encoder():
  """A pretraining checkpoint loads the encoder; the fresh head is reported
  missing and the pretraining heads unused, as the original's init logs."""
  config = bert_tf.BertConfig.from_json_file(
      f"{ORIGINAL_TINY}/bert_config.json")
  model = bert_tf.BertClassifier(config, num_labels=3)
  report = bert_tf.load_checkpoint(model, f"{ORIGINAL_TINY}/bert_model.ckpt")
  assert report.not_in_checkpoint == ["output_weights", "output_bias"]
  assert all(name.startswith("cls/") for name in report.unused)
  expected = dict(np.load(f"{ORIGINAL_TINY}/expected.npz"))
  pooled = model.encoder({name: expected[name] for name in INPUT_NAMES},
                         training=False)["pooled_output"]
  np.testing.assert_allclose(pooled, expected["pooled_output"], atol=1e-5)


def test_checkpoint_names_and_shapes_are_run_classifiers(tmp_path):
  model = bert_tf.BertClassifier(tiny_config(), num_labels=3)
  path = bert_tf.save_checkpoint(model, str(tmp_path / "model.ckpt-1"))
  shapes = dict(tf.train.list_variables(path))
  assert shapes["output_weights"] == [3, 32]
  assert shapes["output_bias"] == [3]
  assert "bert/pooler/dense/kernel" in shapes
  restored = bert_tf.BertClassifier(tiny_config(), num_labels=3)
  bert_tf.load_checkpoint(restored, path)
  inputs = {name: value for name, value in
            random_inputs(tiny_config()).items() if name in INPUT_NAMES}
  np.testing.assert_allclose(restored(inputs)["probabilities"],
                             model(inputs)["probabilities"], atol=1e-6)


def test_outputs_for_classes_and_regression():
  inputs = {name: value for name, value in
            random_inputs(tiny_config()).items() if name in INPUT_NAMES}
  classifier = bert_tf.BertClassifier(tiny_config(), num_labels=3)
  outputs = classifier(inputs)
  np.testing.assert_allclose(outputs["probabilities"],
                             tf.nn.softmax(outputs["logits"]), atol=1e-6)
  np.testing.assert_allclose(np.sum(outputs["probabilities"], -1), 1.0,
                             atol=1e-6)
  regressor = bert_tf.BertClassifier(tiny_config(), num_labels=1)
  outputs = regressor(inputs)
  assert outputs["predictions"].shape == (3,)
  assert "probabilities" not in outputs


def test_round_trips_through_its_config():
  model = bert_tf.BertClassifier(tiny_config(), num_labels=2)
  inputs = {name: value for name, value in
            random_inputs(tiny_config()).items() if name in INPUT_NAMES}
  run_model_test(model, inputs)
