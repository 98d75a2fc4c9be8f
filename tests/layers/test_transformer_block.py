import numpy as np
import pytest

from bert_tf.layers.activations import gelu_exact
from bert_tf.layers.transformer_block import TransformerBlock
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
