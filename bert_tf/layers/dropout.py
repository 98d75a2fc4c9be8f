"""Dropout that draws 16 random bits per element instead of a float.

Dropout is one of the widest element-wise costs of a training step: every
attention probability and every hidden state of every layer gets a random
number. keras.layers.Dropout draws a float32 uniform per element (32 Philox
bits, converted to float, compared with the rate). This layer draws 32 bits
for two elements and compares each half as an integer with the rate scaled
to 2**16: the Philox work halves and the float conversion goes. An element
is dropped with probability round(rate * 2**16) / 2**16 (0.1 becomes
0.1000061) and kept ones are scaled by 1 / (1 - rate), as the original's
tf.nn.dropout scales them. The random draws differ from Keras' (neither
matches the original's stateful TF1 generator).
"""

import keras
import tensorflow as tf

_LEVELS = 1 << 16


@keras.saving.register_keras_serializable(package="bert_tf")
class Dropout(keras.layers.Layer):
  """keras.layers.Dropout(rate) with 16-bit draws (see the module).

  Args:
    rate: the fraction of inputs to drop, in [0, 1).
    seed: seeds this layer's SeedGenerator (default: from keras' global seed).
  """

  def __init__(self, rate, seed=None, **kwargs):
    super().__init__(**kwargs)
    if not 0 <= rate < 1:
      raise ValueError(f"dropout rate must be in [0, 1), got {rate}")
    self.rate = rate
    self.seed = seed
    self.seed_generator = keras.random.SeedGenerator(seed)
    self.supports_masking = True
    # No weights to build: built now, as keras.layers.Dropout, so that a
    # model holding it is built before fit (which otherwise traces it
    # symbolically first, and under a MirroredStrategy fails to).
    self.built = True

  def call(self, inputs, training=False):
    if not training or not self.rate:
      return inputs
    return dropout(inputs, self.rate, self.seed_generator.next())

  def compute_output_shape(self, input_shape):
    return input_shape

  def get_config(self):
    return {**super().get_config(), "rate": self.rate, "seed": self.seed}


def dropout(inputs, rate, seed):
  """inputs with each element zeroed with probability `rate` (to 2**-16),
  the others divided by 1 - rate.

  Args:
    seed: a [2] integer tensor; the same seed gives the same mask.
  """
  inputs = tf.convert_to_tensor(inputs)
  seed = tf.cast(tf.math.floormod(seed, tf.int32.max - 1), tf.int32)
  shape = tf.shape(inputs)
  # Two halves of each word serve neighbours along the last axis.
  words = tf.random.stateless_uniform(
      tf.concat([shape[:-1], [(shape[-1] + 1) // 2]], 0), seed,
      minval=None, maxval=None, dtype=tf.uint32)
  halves = tf.reshape(tf.bitcast(words, tf.uint16),
                      tf.concat([shape[:-1], [-1]], 0))
  if inputs.shape[-1] is None or inputs.shape[-1] % 2:
    halves = halves[..., :shape[-1]]
  threshold = min(round(rate * _LEVELS), _LEVELS - 1)
  keep = halves >= tf.constant(threshold, tf.uint16)
  # x * mask, as the original's tf.nn.dropout multiplied by its 0/1 mask:
  # the gradient is one product with the same mask.
  mask = tf.where(keep, tf.constant(1.0 / (1.0 - rate), inputs.dtype),
                  tf.zeros((), inputs.dtype))
  return inputs * tf.stop_gradient(mask)
