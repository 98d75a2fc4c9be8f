"""LayerNorm as the original (tf.contrib.layers.layer_norm) computes it."""

import keras
import tensorflow as tf
from keras import ops

from bert_tf.config import LAYER_NORM_EPSILON


@keras.saving.register_keras_serializable(package="bert_tf")
class LayerNorm(keras.layers.LayerNormalization):
  """keras.layers.LayerNormalization over the last axis that, computing in
  bfloat16, takes the form TensorFlow's oneDNN graph rewrite fuses into one
  kernel (_MklLayerNorm), where no GPU is visible.

  Keras' form is about ten element-wise operations with casts to float32
  and back; on a CPU each costs a thread pool's dispatch, which outweighs
  the arithmetic at the sizes BERT runs. The fused form is the one
  tf.keras wrote: each row as a channel of a training-mode
  FusedBatchNormV3 (its mean and variance in float32), then gamma and
  beta. The rewrite finds it where the rows are counted at run time, as
  they are in a trace with an unknown batch or sequence length (Predictor
  and every export trace so); elsewhere FusedBatchNormV3 still runs as one
  kernel. float32 computes as Keras does, the original's numbers.
  """

  def call(self, inputs):
    # A GPU has no such rewrite, and TensorFlow's GPU FusedBatchNormV3 may
    # not take bfloat16: Keras' form there.
    if self.compute_dtype != "bfloat16" or \
        tf.config.list_physical_devices("GPU"):
      return super().call(inputs)
    shape = tf.shape(inputs)
    rows = tf.reduce_prod(shape[:-1])
    # [1, rows, width, 1] in NCHW: each row a channel, normalised alone.
    as_channels = tf.reshape(inputs, [1, rows, inputs.shape[-1], 1])
    normalized, _, _ = tf.compat.v1.nn.fused_batch_norm(
        as_channels, scale=tf.fill([rows], 1.0), offset=tf.fill([rows], 0.0),
        epsilon=self.epsilon, data_format="NCHW", is_training=True)
    return (ops.cast(self.beta, inputs.dtype)
            + tf.reshape(normalized, shape) * ops.cast(self.gamma,
                                                       inputs.dtype))


def layer_norm(name, epsilon=LAYER_NORM_EPSILON):
  """A LayerNorm over the last axis, by default with the original's epsilon."""
  return LayerNorm(axis=-1, epsilon=epsilon, name=name)
