"""BertSpanLabeler: run_squad's model, its checkpoint names, and Keras'
compile/fit with start and end positions as targets."""

import keras
import numpy as np
import tensorflow as tf

import bert_tf
from tests.support.helpers import random_inputs, tiny_config
from tests.support.keras_harness import run_model_test

INPUT_NAMES = ("input_ids", "input_mask", "segment_ids")


def inputs():
  return {name: value for name, value in random_inputs(tiny_config()).items()
          if name in INPUT_NAMES}


def test_is_a_keras_model():
  run_model_test(bert_tf.BertSpanLabeler(tiny_config()), inputs())


def test_checkpoint_names_are_run_squads(tmp_path):
  model = bert_tf.BertSpanLabeler(tiny_config())
  path = bert_tf.save_checkpoint(model, str(tmp_path / "model.ckpt-1"))
  shapes = dict(tf.train.list_variables(path))
  assert shapes["cls/squad/output_weights"] == [2, 32]
  assert shapes["cls/squad/output_bias"] == [2]


def test_compiled_loss_on_start_and_end_positions_is_run_squads():
  """Targets [batch, 2] (start, end): the compiled sparse cross-entropy is
  the mean of the start and end losses, as the original's run_squad."""
  model = bert_tf.BertSpanLabeler(tiny_config())
  model.compile(loss=keras.losses.SparseCategoricalCrossentropy(
      from_logits=True), metrics=["sparse_categorical_accuracy"])
  positions = np.array([[1, 3], [0, 0], [5, 9]], np.int32)
  results = model.evaluate(inputs(), positions, batch_size=3, verbose=0,
                           return_dict=True)
  outputs = model(inputs())
  expected = np.mean([
      keras.losses.sparse_categorical_crossentropy(
          positions[:, index], outputs[name], from_logits=True)
      for index, name in enumerate(("start_logits", "end_logits"))])
  np.testing.assert_allclose(results["loss"], expected, rtol=1e-5)
  assert 0 <= results["sparse_categorical_accuracy"] <= 1


def test_compiles_default_weighs_each_example_as_the_runner():
  """compile()'s loss is SpanObjective's, one number per example: a
  sample weight per example scales it (Keras' own sparse cross-entropy
  refused [batch] weights on [batch, 2] targets at the first step), and
  the runners' mean over the real examples is the loss scaled back."""
  model = bert_tf.BertSpanLabeler(tiny_config())
  model.compile()
  positions = np.array([[1, 3], [0, 0], [5, 9]], np.int32)
  real = np.array([1.0, 1.0, 0.0], np.float32)
  weighted = model.evaluate(inputs(), positions, sample_weight=real,
                            batch_size=3, verbose=0, return_dict=True)
  outputs = model(inputs())
  features = {"start_positions": positions[:, 0],
              "end_positions": positions[:, 1], "is_real_example": real}
  trainer_loss = (model.objective.loss_numerators(outputs, features)[
      "span_loss"] / model.objective.loss_denominators(features)["span_loss"])
  np.testing.assert_allclose(weighted["loss"] * 3 / 2, trainer_loss,
                             rtol=1e-5)
