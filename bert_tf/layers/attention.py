"""Multi-head self-attention, the original's "attention/self" scope."""

import math

import keras
import tensorflow as tf
from keras import ops

from bert_tf.layers.dense import Dense
from bert_tf.layers.dropout import Dropout
from bert_tf.layers.initializers import truncated_normal

# Added to the scores of padded keys, as in the original; large enough to
# zero their softmax weight and small enough for float16.
MASKED_SCORE = -10000.0


@keras.saving.register_keras_serializable(package="bert_tf")
class SelfAttention(keras.layers.Layer):
  """Scaled dot-product self-attention over `num_heads` heads.

  Projects the input to query, key and value (Dense layers with
  [hidden, heads*head_size] kernels, as the original's query/key/value
  layers, so that Keras can quantize each), masks padded keys by adding
  -10000 to their scores, and returns the concatenated heads
  [batch_size, seq_length, num_heads * head_size]. The output projection lives
  in TransformerBlock ("attention/output" in the original).

  Args:
    num_heads: number of attention heads.
    head_size: width of each head.
    initializer_range: stddev of the truncated-normal kernel initialiser.
    dropout_rate: dropout on the attention probabilities.

  Example:
    >>> attention = SelfAttention(num_heads=2, head_size=4)
    >>> x = keras.random.normal((1, 3, 8))
    >>> attention(x, ops.ones((1, 3), "int32")).shape
    TensorShape([1, 3, 8])
  """

  def __init__(self, num_heads, head_size, initializer_range=0.02,
               dropout_rate=0.1, **kwargs):
    super().__init__(**kwargs)
    self.num_heads = num_heads
    self.head_size = head_size
    self.initializer_range = initializer_range
    self.dropout_rate = dropout_rate

  def build(self, input_shape):
    width = self.num_heads * self.head_size
    initializer = truncated_normal(self.initializer_range)
    for name in ("query", "key", "value"):
      dense = Dense(width, kernel_initializer=initializer, name=name)
      dense.build(input_shape)
      setattr(self, name, dense)
    self.dropout = Dropout(self.dropout_rate)

  def call(self, hidden_states, input_mask, training=None):
    """Attends from every position to every unpadded position.

    Args:
      hidden_states: [batch_size, seq_length, hidden_size].
      input_mask: [batch_size, seq_length], 1 for real tokens, 0 for padding.
      training: whether dropout is applied.

    Returns:
      [batch_size, seq_length, num_heads * head_size].
    """
    batch_size, seq_length = ops.shape(hidden_states)[0], \
        ops.shape(hidden_states)[1]
    # [batch_size * seq_length, hidden_size]: each projection is then one
    # matmul with its bias, as in the original's attention_layer.
    matrix = ops.reshape(hidden_states, (-1, hidden_states.shape[-1]))

    def heads(projection):
      # [batch_size, num_heads, seq_length, head_size]
      return ops.transpose(ops.reshape(projection(matrix), (
          batch_size, seq_length, self.num_heads, self.head_size)),
                           (0, 2, 1, 3))

    # The original scales the scores by 1 / sqrt(head_size); scaling the
    # query is the same product (bit for bit when head_size is a power of 4,
    # as in every released model) over fewer numbers.
    query, key, value = (heads(self.query), heads(self.key),
                         heads(self.value))
    query *= ops.cast(1.0 / math.sqrt(float(self.head_size)), query.dtype)

    # [batch_size, num_heads, from_seq_length, to_seq_length]
    scores = tf.matmul(query, key, transpose_b=True)
    # [batch_size, 1, 1, to_seq_length]: 0 for real keys, -10000 for padding.
    # (A reshape, not input_mask[:, None, None, :]: LiteRT's builtin ops
    # have no strided slice that adds axes.)
    key_mask = ops.cast(ops.reshape(input_mask, (batch_size, 1, 1, -1)),
                        scores.dtype)
    scores += (1.0 - key_mask) * MASKED_SCORE
    probs = ops.softmax(scores, axis=-1)
    probs = self.dropout(probs, training=training)

    # [batch_size, num_heads, from_seq_length, head_size]
    context = ops.matmul(probs, value)
    return ops.reshape(ops.transpose(context, (0, 2, 1, 3)), (
        batch_size, seq_length, self.num_heads * self.head_size))

  def get_config(self):
    config = super().get_config()
    config.update(
        num_heads=self.num_heads,
        head_size=self.head_size,
        initializer_range=self.initializer_range,
        dropout_rate=self.dropout_rate)
    return config
