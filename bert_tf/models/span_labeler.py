"""BertSpanLabeler: run_squad's model, the encoder plus start/end logits."""

import keras
from keras import ops

from bert_tf.layers.classification_head import ClassificationHead
from bert_tf.models import targets
from bert_tf.models.encoder import EncoderModel
from bert_tf.objectives.spans import SpanObjective


@keras.saving.register_keras_serializable(package="bert_tf")
class BertSpanLabeler(EncoderModel):
  """The original run_squad's create_model.

  Two logits per token from the final hidden states, with output_weights
  [2, hidden_size] and output_bias [2] named cls/squad/output_weights and
  cls/squad/output_bias in checkpoints, as the original names them; no
  dropout on the hidden states (the original has none there).

  Args:
    config: a BertConfig (or its dict).

  Inputs: the encoder's dict (input_ids, input_mask, segment_ids); other
    keys are ignored.

  Outputs: a dict with start_logits and end_logits [batch_size, seq_length]
    (float32).

  Example:
    >>> from bert_tf.config import BertConfig
    >>> config = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=2,
    ...                     num_attention_heads=2, intermediate_size=32)
    >>> model = BertSpanLabeler(config)
    >>> model({"input_ids": ops.ones((2, 4), "int32")})["start_logits"].shape
    TensorShape([2, 4])
  """

  checkpoint_head_names = {
      "cls/squad/output_weights": "span_head.output_weights",
      "cls/squad/output_bias": "span_head.output_bias"}
  huggingface_architectures = ("BertForQuestionAnswering",)
  # Keras' targets: [batch_size, 2] of start and end positions, against
  # the start and end logits stacked, [batch_size, 2, seq_length].
  objective = SpanObjective()

  def __init__(self, config, **kwargs):
    super().__init__(config, **kwargs)
    self.span_head = ClassificationHead(
        num_classes=2, initializer_range=self.config.initializer_range,
        name="squad")
    self.build()

  def build(self, input_shape=None):
    self.span_head.build((None, None, self.config.hidden_size))
    self.built = True

  def check_targets(self, x, y, where):
    """[examples, 2]: each example's start and end, positions in x."""
    shape = targets.input_shape(x, "input_ids")
    length = shape[-1] if shape else self.config.max_position_embeddings
    targets.check_class_ids(y, x, where, length,
                            f"positions (seq_length={length})",
                            [(None, 2)], "[examples, 2] (start, end)")

  def call(self, inputs, training=None):
    sequence_output = self.encoder(inputs, training=training)[
        "sequence_output"]
    # [batch_size, seq_length, 2]
    logits = ops.cast(self.span_head(sequence_output), "float32")
    return {"start_logits": logits[..., 0], "end_logits": logits[..., 1]}

