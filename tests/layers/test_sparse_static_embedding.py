"""SparseStaticEmbedding by hand: each token's weight where the text holds
it, once however often (sentence-transformers' token presence times its
weights)."""

import numpy as np
import tensorflow as tf

from bert_tf.layers.sparse_static_embedding import SparseStaticEmbedding


def test_each_present_tokens_weight_once():
  layer = SparseStaticEmbedding(5)
  layer.build()
  layer.weight.assign([0.5, 1.0, 2.0, 3.0, 4.0])
  ids = tf.ragged.constant([[1, 3, 3], [], [0, 4]])
  np.testing.assert_array_equal(layer(ids), [[0, 1, 0, 3, 0],
                                             [0, 0, 0, 0, 0],
                                             [0.5, 0, 0, 0, 4]])
