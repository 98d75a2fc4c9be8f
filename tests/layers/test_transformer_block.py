import numpy as np
import pytest
import tensorflow as tf

from bert_tf.layers.activations import gelu_exact
from bert_tf.layers.transformer_block import TransformerBlock
from bert_tf.optimization import precision
from tests.layers.test_attention import numpy_attention
from tests.support.keras_harness import run_layer_test


def numpy_layer_norm(x, layer):
  mean = x.mean(-1, keepdims=True)
  variance = x.var(-1, keepdims=True)
  return ((x - mean) / np.sqrt(variance + 1e-12) * layer.gamma.numpy()
          + layer.beta.numpy())


def numpy_dense(x, layer):
  return x @ layer.kernel.numpy() + layer.bias.numpy()


def test_post_layer_norm_block_matches_numpy():
  block = TransformerBlock(hidden_size=8, num_heads=2, intermediate_size=12,
                           hidden_act="gelu_exact", initializer_range=0.3)
  rng = np.random.default_rng(0)
  x = rng.normal(size=(2, 4, 8)).astype(np.float32)
  mask = np.array([[1, 1, 1, 1], [1, 1, 0, 0]], np.float32)
  output = np.asarray(block(x, mask.astype(np.int32)))

  attention = numpy_dense(numpy_attention(block.attention, x, mask),
                          block.attention_output_dense)
  attention = numpy_layer_norm(attention + x, block.attention_layer_norm)
  intermediate = np.asarray(gelu_exact(numpy_dense(
      attention, block.intermediate_dense)))
  expected = numpy_layer_norm(
      numpy_dense(intermediate, block.output_dense) + attention,
      block.output_layer_norm)
  np.testing.assert_allclose(output, expected, atol=2e-5)


def test_heads_must_divide_hidden_size():
  with pytest.raises(ValueError, match="not a multiple"):
    TransformerBlock(hidden_size=10, num_heads=4, intermediate_size=8)


def test_config_round_trip():
  x = np.random.default_rng(1).normal(size=(1, 3, 8)).astype(np.float32)
  run_layer_test(
      TransformerBlock(hidden_size=8, num_heads=2, intermediate_size=12,
                       hidden_act="relu"),
      x, np.ones((1, 3), np.int32))


def test_bfloat16_inference_computes_the_training_forward_pass():
  """Without a gradient, a bfloat16 block takes gelu in the form
  TensorFlow fuses (tf.nn.gelu's): the outputs of its training forward
  pass (dropout off), to bfloat16's precision."""
  with precision.keras_policy("bfloat16"):  # its sublayers too
    block = TransformerBlock(hidden_size=8, num_heads=2,
                             intermediate_size=12, dropout_rate=0.0,
                             attention_dropout_rate=0.0,
                             initializer_range=0.3)
    block.build()
  rng = np.random.default_rng(0)
  x = tf.cast(rng.normal(size=(2, 4, 8)), tf.bfloat16)
  mask = np.array([[1, 1, 1, 1], [1, 1, 0, 0]], np.int32)
  ops_of = lambda training: {op.type for op in tf.function(
      lambda x: block(x, mask, training=training)).get_concrete_function(
          x).graph.get_operations()}
  assert "Tanh" in ops_of(False) and "Tanh" not in ops_of(True)
  inference = tf.cast(block(x, mask, training=False), tf.float32)
  np.testing.assert_allclose(inference, tf.cast(
      block(x, mask, training=True), tf.float32), atol=4 * 2**-7)
