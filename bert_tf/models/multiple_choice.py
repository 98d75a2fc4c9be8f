"""BertMultipleChoice: the paper's SWAG model (§4.4)."""

import keras
from keras import ops

from bert_tf.layers.classification_head import ClassificationHead
from bert_tf.layers.dropout import Dropout
from bert_tf.models import targets
from bert_tf.models.base import ENCODER_INPUTS
from bert_tf.models.encoder import EncoderModel
from bert_tf.objectives.multiple_choice import MultipleChoiceObjective


@keras.saving.register_keras_serializable(package="bert_tf")
class BertMultipleChoice(EncoderModel):
  """Each choice's sequence encoded on its own; one vector scores each
  pooled output (dropout 0.1 before it, as run_classifier's); a softmax
  over the choices.

  Checkpoint head: output_weights [1, hidden_size] and output_bias [1],
  plain names as run_classifier's head.

  Args:
    config: a BertConfig (or its dict).

  Inputs: the encoder's dict, each [batch_size, num_choices, seq_length].

  Outputs: logits and probabilities [batch_size, num_choices] (float32).

  Example:
    >>> from bert_tf.config import BertConfig
    >>> config = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=2,
    ...                     num_attention_heads=2, intermediate_size=32)
    >>> model = BertMultipleChoice(config)
    >>> model({"input_ids": ops.ones((2, 4, 8), "int32")})["logits"].shape
    TensorShape([2, 4])
  """

  checkpoint_head_names = {"output_weights": "choice_head.output_weights",
                           "output_bias": "choice_head.output_bias"}
  huggingface_architectures = ("BertForMultipleChoice",)
  objective = MultipleChoiceObjective()

  input_ranks = {name: 3 for name in ENCODER_INPUTS}

  def __init__(self, config, **kwargs):
    super().__init__(config, **kwargs)
    self.dropout = Dropout(0.1)
    self.choice_head = ClassificationHead(
        num_classes=1, initializer_range=self.config.initializer_range,
        name="output")
    self.build()

  def build(self, input_shape=None):
    self.choice_head.build((None, self.config.hidden_size))
    self.built = True

  def check_targets(self, x, y, where):
    """[examples]: the index of each example's right choice in x."""
    shape = targets.input_shape(x, "input_ids")
    if not shape or len(shape) != 3:
      return
    choices = shape[1]
    targets.check_class_ids(y, x, where, choices,
                            f"choices ({choices} in x)",
                            [(None,), (None, 1)], "[examples]")

  def call(self, inputs, training=None):
    shape = ops.shape(inputs["input_ids"])
    # [batch_size * num_choices, seq_length]
    flat = {name: ops.reshape(inputs[name], (-1, shape[-1]))
            for name in ENCODER_INPUTS if name in inputs}
    pooled_output = self.encoder(flat, training=training)["pooled_output"]
    scores = ops.cast(self.choice_head(
        self.dropout(pooled_output, training=training)), "float32")
    logits = ops.reshape(scores, (-1, shape[1]))
    return {"logits": logits, "probabilities": ops.softmax(logits, axis=-1)}
