"""Word + segment + learned position embeddings, LayerNorm and dropout."""

import keras
import tensorflow as tf
from keras import ops

from bert_tf.layers.dropout import Dropout
from bert_tf.layers.initializers import truncated_normal
from bert_tf.layers.normalization import LAYER_NORM_EPSILON, layer_norm


@keras.saving.register_keras_serializable(package="bert_tf")
class BertEmbeddings(keras.layers.Layer):
  """The input embeddings of BERT, as the original embedding_postprocessor.

  The three tables keep the original shapes ([vocab_size, hidden_size],
  [type_vocab_size, hidden_size], [max_position_embeddings, hidden_size]) so a
  released checkpoint loads without reshaping. `word_embeddings` is also the
  output projection of the masked-LM head (tied weights).

  Args:
    vocab_size: rows of the word table.
    hidden_size: embedding width.
    type_vocab_size: rows of the segment (token type) table.
    max_position_embeddings: rows of the position table; longer inputs are
      an error.
    initializer_range: stddev of the truncated-normal initialiser.
    dropout_rate: dropout after the LayerNorm.

  Example:
    >>> layer = BertEmbeddings(vocab_size=10, hidden_size=8, type_vocab_size=2,
    ...                        max_position_embeddings=16)
    >>> layer(tf.constant([[1, 2, 3]]), tf.constant([[0, 0, 1]])).shape
    TensorShape([1, 3, 8])
  """

  def __init__(self, vocab_size, hidden_size, type_vocab_size,
               max_position_embeddings, initializer_range=0.02,
               dropout_rate=0.1, layer_norm_epsilon=LAYER_NORM_EPSILON,
               **kwargs):
    super().__init__(**kwargs)
    self.vocab_size = vocab_size
    self.hidden_size = hidden_size
    self.type_vocab_size = type_vocab_size
    self.max_position_embeddings = max_position_embeddings
    self.initializer_range = initializer_range
    self.dropout_rate = dropout_rate
    self.layer_norm_epsilon = layer_norm_epsilon

  def build(self, input_shape=None):
    initializer = truncated_normal(self.initializer_range)
    self.word_embeddings = self.add_weight(
        name="word_embeddings", shape=(self.vocab_size, self.hidden_size),
        initializer=initializer)
    self.token_type_embeddings = self.add_weight(
        name="token_type_embeddings",
        shape=(self.type_vocab_size, self.hidden_size),
        initializer=initializer)
    self.position_embeddings = self.add_weight(
        name="position_embeddings",
        shape=(self.max_position_embeddings, self.hidden_size),
        initializer=initializer)
    self.layer_norm = layer_norm("layer_norm", self.layer_norm_epsilon)
    self.layer_norm.build((None, None, self.hidden_size))
    self.dropout = Dropout(self.dropout_rate)

  def call(self, input_ids, segment_ids, training=None):
    """[batch_size, seq_length] ids -> [batch_size, seq_length, hidden_size]."""
    seq_length = self._checked_seq_length(input_ids)
    output = ops.take(self.word_embeddings, input_ids, axis=0)
    # One-hot times the table, as the original: for so few rows it is much
    # faster than a gather, whose gradient sums thousands of rows into two.
    output += ops.matmul(
        ops.one_hot(segment_ids, self.type_vocab_size,
                    dtype=output.dtype),
        ops.cast(self.token_type_embeddings, output.dtype))
    # [seq_length, hidden_size], broadcast over the batch.
    output += self.position_embeddings[:seq_length]
    output = self.layer_norm(output)
    return self.dropout(output, training=training)

  def _checked_seq_length(self, input_ids):
    """The sequence length, refused when the position table is too short."""
    static_length = input_ids.shape[1]
    if static_length is not None:
      if static_length > self.max_position_embeddings:
        raise ValueError(
            f"Sequence length {static_length} exceeds max_position_embeddings "
            f"({self.max_position_embeddings}) of this BERT config; shorten "
            f"the input (max_seq_length) or use a model with a longer table")
      return static_length
    seq_length = tf.shape(input_ids)[1]
    # The length depends on the check, so the check runs before the slice and
    # add that would otherwise fail first with a bare shape error.
    check = tf.debugging.assert_less_equal(
        seq_length, self.max_position_embeddings,
        message="Sequence length exceeds max_position_embeddings")
    with tf.control_dependencies([check]):
      return tf.identity(seq_length)

  def get_config(self):
    config = super().get_config()
    config.update(
        vocab_size=self.vocab_size,
        hidden_size=self.hidden_size,
        type_vocab_size=self.type_vocab_size,
        max_position_embeddings=self.max_position_embeddings,
        initializer_range=self.initializer_range,
        dropout_rate=self.dropout_rate,
        layer_norm_epsilon=self.layer_norm_epsilon)
    return config
