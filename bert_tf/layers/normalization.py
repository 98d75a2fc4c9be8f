"""LayerNorm as the original (tf.contrib.layers.layer_norm) computes it."""

import keras

from bert_tf.config import LAYER_NORM_EPSILON


def layer_norm(name, epsilon=LAYER_NORM_EPSILON):
  """A LayerNorm over the last axis, by default with the original's epsilon."""
  return keras.layers.LayerNormalization(axis=-1, epsilon=epsilon, name=name)
