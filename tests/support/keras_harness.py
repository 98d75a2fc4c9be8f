"""The layer and model harness every layer and model test calls, as
keras-hub's run_layer_test and run_model_test: what Keras promises of any
layer or model, checked the same way for each."""

import json
import os
import tempfile
import zipfile

import keras
import numpy as np
import pytest

import bert_tf
from bert_tf.optimization.precision import dtype_policy
from tests.support.helpers import random_inputs, tiny_config

# Keras' GPTQ configuration, which bert_tf models refuse (they do not
# describe their blocks for it); its calibration data is never read.
GPTQ_CONFIG = keras.quantizers.GPTQConfig(dataset=["text"],
                                          tokenizer=lambda text: [[0]])


def rewrite_keras_file(path, edit_config=None, edit_files=None):
  """Rewrites a .keras file (a zip of config.json, model.weights.h5 and
  assets/) in place, as a tampered file would be: edit_config(config)
  changes the parsed config.json, edit_files({name: bytes}) the members."""
  with zipfile.ZipFile(path) as archive:
    members = {name: archive.read(name) for name in archive.namelist()}
  if edit_config:
    config = json.loads(members["config.json"])
    edit_config(config)
    members["config.json"] = json.dumps(config).encode()
  if edit_files:
    edit_files(members)
  with zipfile.ZipFile(path, "w") as archive:
    for name, data in members.items():
      archive.writestr(name, data)


# A tiny instance of each bert_tf model, by class name.
EVERY_MODEL = {
    "BertEncoder": lambda config: bert_tf.BertEncoder(config),
    "BertPretrainer": lambda config: bert_tf.BertPretrainer(config),
    "BertClassifier": lambda config: bert_tf.BertClassifier(config, 3),
    "BertSpanLabeler": lambda config: bert_tf.BertSpanLabeler(config),
    "BertTagger": lambda config: bert_tf.BertTagger(config, 9),
    "BertFeatureTagger": lambda config: bert_tf.BertFeatureTagger(
        config, 9, (-2, -1), "weighted_sum", lstm_units=8),
    "BertMultipleChoice": lambda config: bert_tf.BertMultipleChoice(config),
    "BertEmbedder": lambda config: bert_tf.BertEmbedder(
        config, pooling=["cls", "mean"], normalize=True,
        dense=[{"units": 8, "activation": "tanh", "use_bias": True}]),
    "BertSparseEncoder": lambda config: bert_tf.BertSparseEncoder(
        config, pooling_strategy="sum", activation="log1p_relu",
        max_active_dims=5, prompts={"query": "q: "}),
}


def model_inputs(name):
  """random_inputs(tiny_config()) as EVERY_MODEL[name] takes them: the
  encoder's, with masked_lm_positions for the pretrainer, four choices each
  for multiple choice."""
  inputs = random_inputs(tiny_config())
  if name == "BertPretrainer":
    return inputs
  inputs.pop("masked_lm_positions")
  if name == "BertMultipleChoice":
    return {key: np.stack([value] * 4, axis=1) for key, value in inputs.items()}
  return inputs


def _as_numpy(outputs):
  return keras.tree.map_structure(np.asarray, outputs)


def _assert_equal(got, expected):
  keras.tree.map_structure(np.testing.assert_array_equal, _as_numpy(got),
                           _as_numpy(expected))


def _assert_close(got, expected, relative):
  """Every output within `relative` of the largest value of its tensor."""
  def close(got, expected):
    scale = max(float(np.abs(expected).max()), 1e-3)
    np.testing.assert_allclose(np.asarray(got, np.float32), expected,
                               rtol=0, atol=relative * scale)
  keras.tree.map_structure(close, _as_numpy(got), _as_numpy(expected))


def _clone(layer):
  return type(layer).from_config(layer.get_config())


def _mixed_clone(layer):
  """A clone under the mixed_bfloat16 policy: its own (the config names
  float32) and its sublayers' (they take the global policy)."""
  with dtype_policy("bfloat16"):
    return type(layer).from_config(
        {**layer.get_config(), "dtype": "mixed_bfloat16"})


def run_layer_test(layer, *call_args):
  """A layer's config round trip (an equal config, equal outputs with the
  same weights), its Keras serialisation by registered name (as a .keras
  file stores it), and its outputs under the mixed_bfloat16 policy (float32
  variables, outputs close to float32's)."""
  expected = layer(*call_args)
  config = layer.get_config()
  clone = _clone(layer)
  assert clone.get_config() == config
  clone(*call_args)  # builds the clone's weights
  assert len(clone.weights) == len(layer.weights)
  clone.set_weights(layer.get_weights())
  _assert_equal(clone(*call_args), expected)

  serialized = keras.saving.serialize_keras_object(layer)
  assert serialized["registered_name"] == f"bert_tf>{type(layer).__name__}"
  restored = keras.saving.deserialize_keras_object(serialized)
  assert type(restored) is type(layer)
  assert restored.get_config() == config

  mixed = _mixed_clone(layer)
  with dtype_policy("bfloat16"):
    mixed(*call_args)  # builds its sublayers
  mixed.set_weights(layer.get_weights())
  assert all(weight.dtype == "float32" for weight in mixed.weights)
  _assert_close(mixed(*call_args), expected, relative=0.05)


def run_model_test(model, inputs, quantize_relative=0.05):
  """What every bert_tf model promises:

  - get_config -> from_config: an equal config and, with the same weights,
    equal outputs;
  - a .keras file: keras.saving.load_model gives the same class with equal
    outputs, bit for bit;
  - checkpoint names: every weight has an original name, and a checkpoint
    saved from the loaded model restores a fresh one exactly;
  - mixed_bfloat16: float32 variables and outputs close to float32's;
  - quantize("int8"): outputs within `quantize_relative` of float's
    largest value, and equal after a .keras round trip; GPTQ is refused
    by bert_tf, with or without Keras' GPTQConfig.
  """
  expected = model(inputs)
  clone = _clone(model)
  assert clone.get_config() == model.get_config()
  assert len(clone.weights) == len(model.weights) > 0
  clone.set_weights(model.get_weights())
  _assert_equal(clone(inputs), expected)

  with tempfile.TemporaryDirectory() as directory:
    path = os.path.join(directory, "model.keras")
    model.save(path)
    loaded = keras.saving.load_model(path)
    assert type(loaded) is type(model)
    _assert_equal(loaded(inputs), expected)

    names = bert_tf.checkpoint_variables(loaded)
    assert {id(weight) for weight in names.values()} == {
        id(weight) for weight in loaded.weights}
    checkpoint = bert_tf.save_checkpoint(
        loaded, os.path.join(directory, "model.ckpt-1"))
    fresh = _clone(model)
    bert_tf.load_checkpoint(fresh, checkpoint)
    _assert_equal(fresh(inputs), expected)

  mixed = _mixed_clone(model)
  mixed.set_weights(model.get_weights())
  assert all(weight.dtype == "float32" for weight in mixed.weights)
  _assert_close(mixed(inputs), expected, relative=0.1)

  quantized = _clone(model)
  quantized.set_weights(model.get_weights())
  quantized.quantize("int8")
  quantized_outputs = quantized(inputs)
  _assert_close(quantized_outputs, expected, relative=quantize_relative)
  with tempfile.TemporaryDirectory() as directory:
    path = os.path.join(directory, "quantized.keras")
    quantized.save(path)
    _assert_equal(keras.saving.load_model(path)(inputs), quantized_outputs)
  for mode, config in (("gptq", None), ("gptq", GPTQ_CONFIG)):
    with pytest.raises(ValueError, match="support 'int8', 'int4', 'float8'"):
      _clone(model).quantize(mode, config=config)
  return loaded
