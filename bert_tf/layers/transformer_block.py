"""One post-LayerNorm transformer block, the original's "layer_N" scope."""

import keras
from keras import ops

from bert_tf.layers.activations import get_activation, inference_activation
from bert_tf.layers.attention import SelfAttention
from bert_tf.layers.dense import Dense
from bert_tf.layers.dropout import Dropout
from bert_tf.layers.initializers import truncated_normal
from bert_tf.layers.normalization import LAYER_NORM_EPSILON, layer_norm


@keras.saving.register_keras_serializable(package="bert_tf")
class TransformerBlock(keras.layers.Layer):
  """Self-attention and feed-forward, each followed by residual + LayerNorm.

  Computes, as the original transformer_model does for one layer:

      attention = LayerNorm(x + Dropout(Dense(SelfAttention(x))))
      output = LayerNorm(attention + Dropout(Dense(act(Dense(attention)))))

  Args:
    hidden_size: width of the input and output.
    num_heads: attention heads; must divide hidden_size.
    intermediate_size: width of the feed-forward layer.
    hidden_act: name of the feed-forward activation (see activations.py).
    dropout_rate: dropout after the attention output and feed-forward output.
    attention_dropout_rate: dropout on the attention probabilities.
    initializer_range: stddev of the truncated-normal kernel initialiser.

  Example:
    >>> block = TransformerBlock(hidden_size=8, num_heads=2,
    ...                          intermediate_size=16)
    >>> x = keras.random.normal((2, 5, 8))
    >>> block(x, keras.ops.ones((2, 5), "int32")).shape
    TensorShape([2, 5, 8])
  """

  def __init__(self, hidden_size, num_heads, intermediate_size,
               hidden_act="gelu", dropout_rate=0.1,
               attention_dropout_rate=0.1, initializer_range=0.02,
               layer_norm_epsilon=LAYER_NORM_EPSILON, **kwargs):
    super().__init__(**kwargs)
    if hidden_size % num_heads:
      raise ValueError(f"hidden_size ({hidden_size}) is not a multiple of "
                       f"num_heads ({num_heads})")
    self.hidden_size = hidden_size
    self.num_heads = num_heads
    self.intermediate_size = intermediate_size
    self.hidden_act = hidden_act
    self.dropout_rate = dropout_rate
    self.attention_dropout_rate = attention_dropout_rate
    self.layer_norm_epsilon = layer_norm_epsilon
    self.initializer_range = initializer_range
    self.intermediate_activation = get_activation(hidden_act)

  def build(self, input_shape=None):
    hidden_shape = (None, None, self.hidden_size)
    initializer = truncated_normal(self.initializer_range)

    def dense(units, name, input_width):
      layer = Dense(units, kernel_initializer=initializer, name=name)
      layer.build((None, None, input_width))
      return layer

    self.attention = SelfAttention(
        num_heads=self.num_heads,
        head_size=self.hidden_size // self.num_heads,
        initializer_range=self.initializer_range,
        dropout_rate=self.attention_dropout_rate,
        name="attention")
    self.attention.build(hidden_shape)
    self.attention_output_dense = dense(
        self.hidden_size, "attention_output", self.hidden_size)
    self.attention_layer_norm = layer_norm("attention_layer_norm",
                                           self.layer_norm_epsilon)
    self.attention_layer_norm.build(hidden_shape)
    self.intermediate_dense = dense(
        self.intermediate_size, "intermediate", self.hidden_size)
    self.output_dense = dense(self.hidden_size, "output",
                              self.intermediate_size)
    self.output_layer_norm = layer_norm("output_layer_norm",
                                        self.layer_norm_epsilon)
    self.output_layer_norm.build(hidden_shape)
    self.dropout = Dropout(self.dropout_rate)

  def call(self, hidden_states, input_mask, training=None):
    """[batch_size, seq_length, hidden_size] -> the same shape.

    `input_mask` is [batch_size, seq_length], 1 for real tokens, 0 for padding.
    """
    shape = ops.shape(hidden_states)
    # [batch_size * seq_length, width] from here on, as the original's
    # transformer_model: each dense layer is then one matmul with its bias
    # (fused by TensorFlow's graph optimiser), not a tensordot.
    as_matrix = lambda tensor: ops.reshape(tensor, (-1, tensor.shape[-1]))
    attention_output = as_matrix(self.attention(hidden_states, input_mask,
                                                training=training))
    attention_output = self.attention_output_dense(attention_output)
    attention_output = self.dropout(attention_output, training=training)
    attention_output = self.attention_layer_norm(
        attention_output + as_matrix(hidden_states))

    activation = self.intermediate_activation if training else \
        inference_activation(self.hidden_act, self.compute_dtype)
    intermediate_output = activation(self.intermediate_dense(
        attention_output))
    layer_output = self.output_dense(intermediate_output)
    layer_output = self.dropout(layer_output, training=training)
    return ops.reshape(
        self.output_layer_norm(layer_output + attention_output), shape)

  def get_config(self):
    config = super().get_config()
    config.update(
        hidden_size=self.hidden_size,
        num_heads=self.num_heads,
        intermediate_size=self.intermediate_size,
        hidden_act=self.hidden_act,
        dropout_rate=self.dropout_rate,
        attention_dropout_rate=self.attention_dropout_rate,
        initializer_range=self.initializer_range,
        layer_norm_epsilon=self.layer_norm_epsilon)
    return config
