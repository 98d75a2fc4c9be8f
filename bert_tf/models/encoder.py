"""BertEncoder: the original BertModel ("bert" scope) as a Keras 3 model."""

import keras
from keras import ops

from bert_tf.config import BertConfig
from bert_tf.layers.embeddings import BertEmbeddings
from bert_tf.layers.initializers import truncated_normal
from bert_tf.layers.transformer_block import TransformerBlock
from bert_tf.models.base import BertKerasModel
from bert_tf.models.inputs import optional_input, required_input
from bert_tf.objectives.classification import ClassificationObjective


def as_config(config):
  """Accepts a BertConfig or its dict form (as get_config stores it)."""
  if isinstance(config, BertConfig):
    return config
  return BertConfig.from_dict(config)


@keras.saving.register_keras_serializable(package="bert_tf")
class BertEncoder(BertKerasModel):
  """Embeddings, a stack of transformer blocks and the tanh pooler.

  All weights exist as soon as the encoder is constructed, so a checkpoint can
  be loaded before the first call.

  Args:
    config: a BertConfig (or its dict).

  Inputs (a dict of int32 [batch_size, seq_length] tensors):
    input_ids: WordPiece ids.
    input_mask: 1 for real tokens, 0 for padding (default: all ones).
    segment_ids: 0 for the first segment, 1 for the second (default: zeros).

  Outputs (a dict):
    sequence_output: [batch_size, seq_length, hidden_size], the last layer.
    pooled_output: [batch_size, hidden_size], tanh(dense(first token)).
    all_encoder_layers: list of num_hidden_layers such sequence tensors.
    embedding_output: [batch_size, seq_length, hidden_size].

  Example:
    >>> config = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=2,
    ...                     num_attention_heads=2, intermediate_size=32)
    >>> encoder = BertEncoder(config)
    >>> out = encoder({"input_ids": keras.ops.ones((1, 4), "int32")})
    >>> out["pooled_output"].shape
    TensorShape([1, 16])
  """

  # The encoder's own names are bert_tf/checkpoints/names.py's table
  # (encoder_names); it has no head.
  checkpoint_head_names = {}
  huggingface_architectures = ("BertModel",)

  def __init__(self, config, **kwargs):
    super().__init__(**kwargs)
    self.config = as_config(config)
    config = self.config
    self.embeddings = BertEmbeddings(
        vocab_size=config.vocab_size,
        hidden_size=config.hidden_size,
        type_vocab_size=config.type_vocab_size,
        max_position_embeddings=config.max_position_embeddings,
        initializer_range=config.initializer_range,
        dropout_rate=config.hidden_dropout_prob,
        layer_norm_epsilon=config.layer_norm_eps,
        name="embeddings")
    self.transformer_layers = [
        TransformerBlock(
            hidden_size=config.hidden_size,
            num_heads=config.num_attention_heads,
            intermediate_size=config.intermediate_size,
            hidden_act=config.hidden_act,
            dropout_rate=config.hidden_dropout_prob,
            attention_dropout_rate=config.attention_probs_dropout_prob,
            initializer_range=config.initializer_range,
            layer_norm_epsilon=config.layer_norm_eps,
            name=f"layer_{index}")
        for index in range(config.num_hidden_layers)
    ]
    self.pooler = keras.layers.Dense(
        config.hidden_size, activation="tanh",
        kernel_initializer=truncated_normal(config.initializer_range),
        name="pooler")
    self.build()

  def build(self, input_shape=None):
    hidden_shape = (None, None, self.config.hidden_size)
    self.embeddings.build()
    for block in self.transformer_layers:
      block.build(hidden_shape)
    self.pooler.build((None, self.config.hidden_size))
    self.built = True

  @property
  def embedding_table(self):
    """The word embeddings [vocab_size, hidden_size] (tied to the MLM head)."""
    return self.embeddings.word_embeddings

  def call(self, inputs, training=None):
    # int32 whatever the caller's integer type (Keras' fit, building a model
    # under a MirroredStrategy, even passes float32 placeholders).
    input_ids = ops.cast(
        required_input(inputs, "input_ids", type(self).__name__), "int32")
    input_mask = ops.cast(
        optional_input(inputs, "input_mask", input_ids, 1), "int32")
    segment_ids = ops.cast(
        optional_input(inputs, "segment_ids", input_ids, 0), "int32")

    embedding_output = self.embeddings(input_ids, segment_ids,
                                       training=training)
    hidden_states = embedding_output
    all_encoder_layers = []
    for block in self.transformer_layers:
      hidden_states = block(hidden_states, input_mask, training=training)
      all_encoder_layers.append(hidden_states)

    # [batch_size, hidden_size]: the pooler reads the [CLS] position.
    pooled_output = self.pooler(hidden_states[:, 0, :])
    return {
        "sequence_output": hidden_states,
        "pooled_output": pooled_output,
        "all_encoder_layers": all_encoder_layers,
        "embedding_output": embedding_output,
    }


class EncoderModel(BertKerasModel):
  """What every model built on a BertEncoder shares: the encoder as
  `.encoder`, named "bert" as the original's scope (checkpoints find it
  there), and a get_config of the BertConfig plus the constructor arguments
  a subclass names in `config_arguments` (its attributes of those names).

  Args:
    config: a BertConfig (or its dict).
  """

  config_arguments = ()

  # The task's loss and metrics (bert_tf.objectives), which compile()
  # takes by default and the runners' Trainer trains with.
  objective = ClassificationObjective()

  def __init__(self, config, **kwargs):
    super().__init__(**kwargs)
    self.config = as_config(config)
    self.encoder = BertEncoder(self.config, name="bert")

  def target_output(self, outputs):
    """What compile()'s losses and metrics compare with targets that are
    not a dict: what the objective's loss scores (the logits, or a span's
    start and end logits), so that a plain array of labels trains it."""
    return self.objective.keras_scores(outputs)

  def compile_defaults(self):
    """The objective's loss and metric."""
    return self.objective.keras_defaults()

  def compiled_outputs(self, y, y_pred):
    """y_pred as compile()'s losses and metrics see it: the outputs y names
    where y is a dict keyed by output name (so that one loss applies to
    each), else `target_output`."""
    if not isinstance(y_pred, dict):
      return y_pred
    if not isinstance(y, dict):
      return self.target_output(y_pred)
    unknown = sorted(set(y) - set(y_pred))
    if unknown:
      raise ValueError(f"{type(self).__name__}: y names {unknown}, not "
                       f"outputs of the model: {sorted(y_pred)}")
    return {name: y_pred[name] for name in y}

  def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None,
                   training=True):
    return super().compute_loss(x, y, self.compiled_outputs(y, y_pred),
                                sample_weight, training)

  def compute_metrics(self, x, y, y_pred, sample_weight=None):
    return super().compute_metrics(x, y, self.compiled_outputs(y, y_pred),
                                   sample_weight)

  def get_config(self):
    config = super().get_config()
    config.update({name: getattr(self, name)
                   for name in self.config_arguments})
    return config
