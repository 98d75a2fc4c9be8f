"""LayerNorm: Keras' own in float32; in bfloat16 the form TensorFlow fuses
into one kernel, with the same values to bfloat16's precision."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.layers.normalization import LayerNorm, layer_norm
from tests.support.keras_harness import run_layer_test

RNG = np.random.default_rng(0)
# Rows far from zero mean and unit scale, so that a normalisation that
# skipped either would show.
INPUTS = RNG.normal(3.0, 4.0, (2, 5, 16)).astype(np.float32)
GAMMA, BETA = RNG.normal(size=(2, 16)).astype(np.float32)


def built(policy="float32"):
  layer = layer_norm("layer_norm")
  if policy != "float32":
    layer = LayerNorm(epsilon=layer.epsilon, dtype=policy)
  layer.build((None, None, 16))
  layer.set_weights([GAMMA, BETA])
  return layer


def original_layer_norm(x):
  """tf.contrib.layers.layer_norm's formula, as the original computes it."""
  mean, variance = tf.nn.moments(x, [-1], keepdims=True)
  return tf.nn.batch_normalization(x, mean, variance, BETA, GAMMA, 1e-12)


def test_float32_is_keras_layer_normalization():
  layer = built()
  keras_layer = keras.layers.LayerNormalization(epsilon=1e-12)
  keras_layer.build((None, None, 16))
  keras_layer.set_weights([GAMMA, BETA])
  np.testing.assert_array_equal(layer(INPUTS), keras_layer(INPUTS))
  np.testing.assert_allclose(layer(INPUTS), original_layer_norm(INPUTS),
                             atol=1e-5)
  run_layer_test(layer, INPUTS)


@pytest.mark.parametrize("policy", ["bfloat16", "mixed_bfloat16"])
def test_bfloat16_normalises_as_float32_to_its_precision(policy):
  """bfloat16 keeps 8 significant bits: each output within 2**-7 of its
  size, from the rounding of the input, the normalised row and the affine
  step; the gradients too."""
  layer = built(policy)
  x = tf.cast(INPUTS, tf.bfloat16)
  with tf.GradientTape(persistent=True) as tape:
    tape.watch(x)
    outputs = layer(x)
    loss = tf.reduce_sum(tf.cast(outputs, tf.float32) ** 2)
  assert outputs.dtype == tf.bfloat16
  float32 = built()
  exact = tf.cast(x, tf.float32)
  with tf.GradientTape(persistent=True) as exact_tape:
    exact_tape.watch(exact)
    expected = float32(exact)
    exact_loss = tf.reduce_sum(expected ** 2)
  scale = np.abs(expected).max()
  np.testing.assert_allclose(tf.cast(outputs, tf.float32), expected,
                             atol=scale * 2**-7)
  for ours, theirs in zip(
      tape.gradient(loss, [x, *layer.trainable_weights]),
      exact_tape.gradient(exact_loss, [exact, *float32.trainable_weights])):
    theirs = np.asarray(theirs)
    np.testing.assert_allclose(tf.cast(ours, tf.float32), theirs,
                               atol=np.abs(theirs).max() * 2**-5)


def fused_ops(policy, input_shape):
  """The ops of a traced call that compute the normalisation."""
  layer = built(policy)
  traced = tf.function(layer).get_concrete_function(
      tf.TensorSpec(input_shape, layer.compute_dtype))
  return {op.type for op in traced.graph.get_operations()} & {
      "FusedBatchNormV3", "Mean", "SquaredDifference", "Rsqrt"}


def test_bfloat16_normalises_each_row_in_one_op():
  """The form TensorFlow's oneDNN rewrite turns into _MklLayerNorm: one
  FusedBatchNormV3 over the rows; float32 keeps Keras' ops."""
  assert fused_ops("bfloat16", [None, None, 16]) == {"FusedBatchNormV3"}
  assert fused_ops("mixed_bfloat16", [None, 16]) == {"FusedBatchNormV3"}
  assert "FusedBatchNormV3" not in fused_ops("float32", [None, None, 16])


def test_keras_form_where_a_gpu_is_visible(monkeypatch):
  """TensorFlow's GPU kernels have no such rewrite to gain from."""
  monkeypatch.setattr(tf.config, "list_physical_devices",
                      lambda kind=None: ["GPU:0"] if kind == "GPU" else [])
  assert "FusedBatchNormV3" not in fused_ops("bfloat16", [None, None, 16])
