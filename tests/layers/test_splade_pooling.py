"""SpladePooling against its formula by hand (sentence-transformers'
SpladePooling: log1p(relu) of the masked logits, a second log1p for
log1p_relu, max or sum over the tokens), and the top-k selection."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.layers.splade_pooling import (SpladePooling, sparse_embeddings,
                                           top_k_weights)


@pytest.mark.parametrize("pooling_strategy", ["max", "sum"])
@pytest.mark.parametrize("activation", ["relu", "log1p_relu"])
def test_splade_pooling_by_hand(pooling_strategy, activation):
  logits = np.random.default_rng(0).normal(size=(2, 4, 6)).astype(
      np.float32) * 3
  mask = np.array([[1, 1, 1, 0], [1, 1, 0, 0]], np.int32)
  weights = np.log1p(np.maximum(logits, 0))
  if activation == "log1p_relu":
    weights = np.log1p(weights)
  weights = weights * mask[:, :, None]
  expected = weights.max(1) if pooling_strategy == "max" else weights.sum(1)
  got = SpladePooling(pooling_strategy, activation)(logits, mask)
  np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_tiny_and_large_logits_keep_log1p_s_value_and_zeros():
  """Written without Log1p (for ONNX), the weights stay log1p's: a logit
  too small to change 1 + x keeps its own value, not 0."""
  logits = np.array([[[0, 1e-30, 1e-8, 6e-8, 1e-3, 0.5, 10, 1e4, 1e30]]],
                    np.float32)
  got = SpladePooling("max", "relu")(logits, np.ones((1, 1), np.int32))
  np.testing.assert_allclose(got[0], np.log1p(logits[0, 0].astype(
      np.float64)), rtol=3e-7)
  assert got.numpy()[0, 0] == 0 and np.all(got.numpy()[0, 1:] > 0)


def test_top_k_weights_and_sparse_embeddings():
  embeddings = np.array([[0, 3, 1, 2], [0, 0, 5, 0]], np.float32)
  ids, weights = top_k_weights(embeddings, 2)
  assert ids.numpy().tolist()[0] == [1, 3]
  assert weights.numpy().tolist() == [[3, 2], [5, 0]]
  sparse = sparse_embeddings(embeddings, 2)
  assert sparse.indices.numpy().tolist() == [[0, 1], [0, 3], [1, 2]]
  assert tf.sparse.to_dense(sparse).numpy().tolist() == [[0, 3, 0, 2],
                                                         [0, 0, 5, 0]]
  for k in (10, 2**40):  # past int32
    assert sparse_embeddings(embeddings, k).values.numpy().tolist() == [
        3, 1, 2, 5]
  assert sparse_embeddings(embeddings).values.numpy().tolist() == [3, 1, 2, 5]
