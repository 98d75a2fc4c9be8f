"""The masked-LM head: the original's "cls/predictions" scope."""

import keras
import tensorflow as tf
from keras import ops

from bert_tf.layers.activations import get_activation
from bert_tf.layers.initializers import truncated_normal
from bert_tf.layers.normalization import LAYER_NORM_EPSILON, layer_norm


@keras.saving.register_keras_serializable(package="bert_tf")
class MaskedLMHead(keras.layers.Layer):
  """Predicts the vocabulary at the masked positions.

  Gathers the hidden states at `masked_lm_positions`, applies the transform
  (dense + activation + LayerNorm), projects onto the word-embedding table
  (tied weights, passed in at call time so this layer owns no copy of it) and
  adds this layer's own `output_bias`, as the original get_masked_lm_output.

  Args:
    vocab_size: number of output classes (rows of the embedding table).
    hidden_size: width of the transform.
    hidden_act: name of the transform activation.
    initializer_range: stddev of the truncated-normal kernel initialiser.

  Example:
    >>> head = MaskedLMHead(vocab_size=10, hidden_size=8)
    >>> sequence = keras.random.normal((2, 5, 8))
    >>> table = keras.random.normal((10, 8))
    >>> head(sequence, ops.array([[1, 3], [0, 0]]), table).shape
    TensorShape([2, 2, 10])
  """

  def __init__(self, vocab_size, hidden_size, hidden_act="gelu",
               initializer_range=0.02, layer_norm_epsilon=LAYER_NORM_EPSILON,
               **kwargs):
    super().__init__(**kwargs)
    self.vocab_size = vocab_size
    self.hidden_size = hidden_size
    self.hidden_act = hidden_act
    self.initializer_range = initializer_range
    self.layer_norm_epsilon = layer_norm_epsilon
    self.transform_activation = get_activation(hidden_act)

  def build(self, input_shape=None):
    self.transform_dense = keras.layers.Dense(
        self.hidden_size,
        kernel_initializer=truncated_normal(self.initializer_range),
        name="transform")
    self.transform_dense.build((None, None, self.hidden_size))
    self.transform_layer_norm = layer_norm("transform_layer_norm",
                                           self.layer_norm_epsilon)
    self.transform_layer_norm.build((None, None, self.hidden_size))
    self.output_bias = self.add_weight(
        name="output_bias", shape=(self.vocab_size,), initializer="zeros")

  def call(self, sequence_output, masked_lm_positions, embedding_table):
    """Logits over the vocabulary at each masked position.

    Args:
      sequence_output: [batch_size, seq_length, hidden_size].
      masked_lm_positions: [batch_size, num_predictions] int positions.
      embedding_table: [vocab_size, hidden_size], the word embeddings.

    Returns:
      [batch_size, num_predictions, vocab_size] float32 logits.
    """
    positions = ops.cast(masked_lm_positions, "int32")
    # [batch_size, num_predictions, hidden_size]
    # (expand_dims, not positions[:, :, None]: LiteRT's builtin ops have no
    # strided slice that adds an axis.)
    hidden = ops.take_along_axis(sequence_output,
                                 ops.expand_dims(positions, -1), axis=1)
    return self.token_logits(hidden, embedding_table)

  def token_logits(self, hidden, embedding_table):
    """Logits over the vocabulary at every position of `hidden` [batch_size,
    length, hidden_size]: [batch_size, length, vocab_size] float32 (a
    sparse encoder's, at all its tokens)."""
    hidden = self.transform_activation(self.transform_dense(hidden))
    hidden = self.transform_layer_norm(hidden)
    table = ops.cast(embedding_table, hidden.dtype)
    # [batch_size * length, vocab_size]: a 2-D matmul against the
    # table as stored (transpose_b), whose gradient is a matmul too; neither
    # an einsum (XLA compiles its gradient several times slower on CPU) nor
    # a transposed copy of the table each step.
    logits = tf.matmul(ops.reshape(hidden, (-1, self.hidden_size)), table,
                       transpose_b=True)
    logits += ops.cast(self.output_bias, logits.dtype)
    return ops.reshape(ops.cast(logits, "float32"), (
        ops.shape(hidden)[0], ops.shape(hidden)[1], self.vocab_size))

  def get_config(self):
    config = super().get_config()
    config.update(
        vocab_size=self.vocab_size,
        hidden_size=self.hidden_size,
        hidden_act=self.hidden_act,
        initializer_range=self.initializer_range,
        layer_norm_epsilon=self.layer_norm_epsilon)
    return config
