"""A per-token weight lookup, as sentence-transformers'
SparseStaticEmbedding computes it: the query route of inference-free
SPLADE."""

import keras
import tensorflow as tf


@keras.saving.register_keras_serializable(package="bert_tf")
class SparseStaticEmbedding(keras.layers.Layer):
  """Token ids [batch, (tokens)] (ragged, no padding) -> [batch,
  vocab_size]: each vocabulary token's weight where the text holds it
  (once, however often), else 0.

  Args:
    vocab_size: the number of weights, one per vocabulary token.
  """

  def __init__(self, vocab_size, **kwargs):
    super().__init__(**kwargs)
    self.vocab_size = vocab_size

  def build(self, input_shape=None):
    self.weight = self.add_weight(name="weight", shape=(self.vocab_size,),
                                  initializer="ones")

  def call(self, token_ids):
    presence = tf.math.bincount(
        tf.cast(token_ids, tf.int32), minlength=self.vocab_size,
        maxlength=self.vocab_size, binary_output=True, axis=-1,
        dtype=tf.float32)
    return presence * tf.cast(self.weight, tf.float32)

  def get_config(self):
    return {**super().get_config(), "vocab_size": self.vocab_size}
