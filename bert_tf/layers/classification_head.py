"""A logits layer whose weights keep the original [num_classes, width] layout."""

import keras
from keras import ops

from bert_tf.layers.initializers import truncated_normal


@keras.saving.register_keras_serializable(package="bert_tf")
class ClassificationHead(keras.layers.Layer):
  """logits = x @ output_weights^T + output_bias.

  The original code creates its classifier weights (cls/seq_relationship and
  the fine-tuning heads of run_classifier, run_squad, ...) as `output_weights`
  of shape [num_classes, width] and multiplies with transpose_b; this layer
  keeps that layout so checkpoints map one to one.

  Args:
    num_classes: number of logits.
    initializer_range: stddev of the truncated-normal weight initialiser.

  Example:
    >>> head = ClassificationHead(num_classes=2)
    >>> head(keras.random.normal((3, 8))).shape
    TensorShape([3, 2])
  """

  def __init__(self, num_classes, initializer_range=0.02, **kwargs):
    super().__init__(**kwargs)
    self.num_classes = num_classes
    self.initializer_range = initializer_range
    # Per position, so a padding mask (run_ner's BiLSTM's) passes through.
    self.supports_masking = True

  def build(self, input_shape):
    self.output_weights = self.add_weight(
        name="output_weights", shape=(self.num_classes, input_shape[-1]),
        initializer=truncated_normal(self.initializer_range))
    self.output_bias = self.add_weight(
        name="output_bias", shape=(self.num_classes,), initializer="zeros")

  def call(self, inputs):
    """[..., width] -> [..., num_classes] logits."""
    logits = ops.matmul(inputs, ops.transpose(self.output_weights))
    return logits + self.output_bias

  def get_config(self):
    config = super().get_config()
    config.update(num_classes=self.num_classes,
                  initializer_range=self.initializer_range)
    return config
