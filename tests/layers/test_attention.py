import numpy as np

from bert_tf.layers.attention import SelfAttention
from tests.support.keras_harness import run_layer_test


def numpy_attention(layer, x, mask):
  """The original attention_layer written out in numpy."""
  def project(dense):
    return x @ dense.kernel.numpy() + dense.bias.numpy()
  batch, seq, _ = x.shape
  heads, size = layer.num_heads, layer.head_size
  split = lambda t: t.reshape(batch, seq, heads, size).transpose(0, 2, 1, 3)
  q, k, v = (split(project(d)) for d in (layer.query, layer.key, layer.value))
  scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(size)
  scores += (1.0 - mask[:, None, None, :]) * -10000.0
  probs = np.exp(scores - scores.max(-1, keepdims=True))
  probs /= probs.sum(-1, keepdims=True)
  return (probs @ v).transpose(0, 2, 1, 3).reshape(batch, seq, heads * size)


def test_matches_numpy_reference_with_padding():
  layer = SelfAttention(num_heads=2, head_size=4, initializer_range=0.5)
  rng = np.random.default_rng(1)
  x = rng.normal(size=(2, 5, 8)).astype(np.float32)
  mask = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], np.float32)
  output = np.asarray(layer(x, mask.astype(np.int32)))
  np.testing.assert_allclose(output, numpy_attention(layer, x, mask),
                             atol=1e-5)


def test_padded_keys_have_no_influence():
  layer = SelfAttention(num_heads=2, head_size=4)
  rng = np.random.default_rng(2)
  x = rng.normal(size=(1, 6, 8)).astype(np.float32)
  mask = np.array([[1, 1, 1, 1, 0, 0]], np.int32)
  changed = x.copy()
  changed[:, 4:] = rng.normal(size=(1, 2, 8))
  np.testing.assert_allclose(np.asarray(layer(x, mask))[:, :4],
                             np.asarray(layer(changed, mask))[:, :4],
                             atol=1e-6)


def test_config_round_trip():
  x = np.random.default_rng(3).normal(size=(1, 3, 8)).astype(np.float32)
  run_layer_test(SelfAttention(num_heads=2, head_size=4), x,
                 np.ones((1, 3), np.int32))
