"""BertMultipleChoice: the paper's SWAG model (§4.4)."""

import keras
import numpy as np
import tensorflow as tf
from keras import ops

from bert_tf.layers.classification_head import ClassificationHead
from bert_tf.layers.dropout import Dropout
from bert_tf.models import targets
from bert_tf.models.base import ENCODER_INPUTS
from bert_tf.models.text_model import TextModel, checked_text, kind_of
from bert_tf.objectives.multiple_choice import MultipleChoiceObjective
from bert_tf.text.swag.preprocessor import (BertMultipleChoicePreprocessor,
                                            checked_inputs)


@keras.saving.register_keras_serializable(package="bert_tf")
class BertMultipleChoice(TextModel):
  """Each choice's sequence encoded on its own; one vector scores each
  pooled output (dropout 0.1 before it, as run_classifier's); a softmax
  over the choices.

  Checkpoint head: output_weights [1, hidden_size] and output_bias [1],
  plain names as run_classifier's head.

  Args:
    config: a BertConfig (or its dict).
    preprocessor: an optional BertMultipleChoicePreprocessor (see
      TextModel); the model then takes raw text, packed as run_swag packs
      it and its export's serve_text does.

  Inputs: the encoder's dict, each [batch_size, num_choices, seq_length];
    or, with a preprocessor, a pair (contexts, endings): a list of
    contexts and, for each, a list of its endings (each whole, as SWAG's
    sent2 and ending joined by a space), the same number for every
    context of a call.

  Outputs: logits and probabilities [batch_size, num_choices] (float32),
    and choice [batch_size], the likeliest ending's index.

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
  preprocessor_class = BertMultipleChoicePreprocessor

  input_ranks = {name: 3 for name in ENCODER_INPUTS}

  def __init__(self, config, *, preprocessor=None, **kwargs):
    super().__init__(config, preprocessor=preprocessor, **kwargs)
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
    shape = _choices_shape(x)
    if not shape or len(shape) < 2 or shape[1] is None:
      return
    choices = shape[1]
    targets.check_class_ids(y, x, where, choices,
                            f"choices ({choices} in x)",
                            [(None,), (None, 1)], "[examples]")

  def input_signature(self):
    if self.preprocessor is None:
      return super().input_signature()
    return [(tf.TensorSpec([None], tf.string, name="context"),
             tf.TensorSpec([None, None], tf.string, name="endings"))]

  def _check_not_bare_text(self, x, method):
    """A bare context is refused by text_columns, naming this model's
    form."""

  def text_columns(self, x, method):
    """(contexts, endings) with each text checked, as string tensors
    [examples] and [examples, choices]; ids (a dict) or a dataset as they
    are."""
    where = self._where(method)
    if isinstance(x, tuple):
      return self._text_pair(x, where, method)
    if isinstance(x, (list, np.ndarray, str, bytes, keras.KerasTensor)) or \
        tf.is_tensor(x):
      raise ValueError(f"{where}: x is a {kind_of(x)}; expected a pair "
                       "(contexts, endings): a list of contexts and a list "
                       "of each one's endings (a dataset yields "
                       "((contexts, endings), labels))")
    return x

  def _text_pair(self, x, where, method):
    """(contexts, endings) checked, each error naming its place in x."""
    if len(x) != 2:
      raise ValueError(f"{where}: x is a tuple of {len(x)}; expected a pair "
                       "(contexts, endings)")
    contexts, endings = x
    if isinstance(contexts, (str, bytes)):
      raise ValueError(f"{where}: x[0] is one {kind_of(contexts)}; expected "
                       f"a list of contexts: {method}(([context], "
                       "[endings]))")
    contexts = self._text_column(contexts, "x[0]", method)
    if isinstance(endings, np.ndarray):
      endings = endings.tolist()
    if isinstance(endings, (list, tuple)):
      if isinstance(contexts, list) and len(endings) != len(contexts):
        raise ValueError(f"{where}: x[1] holds endings for {len(endings)} "
                         f"contexts, but x[0] has {len(contexts)}")
      if not endings:  # no examples: keras_inputs says so
        return contexts, endings
      endings = _checked_endings(endings, where)
    return checked_inputs((contexts, endings), where)

  def call(self, inputs, training=None):
    inputs = self.encoder_inputs(inputs)
    shape = ops.shape(inputs["input_ids"])
    # [batch_size * num_choices, seq_length]
    flat = {name: ops.reshape(inputs[name], (-1, shape[-1]))
            for name in ENCODER_INPUTS if name in inputs}
    pooled_output = self.encoder(flat, training=training)["pooled_output"]
    scores = ops.cast(self.choice_head(
        self.dropout(pooled_output, training=training)), "float32")
    logits = ops.reshape(scores, (-1, shape[1]))
    # tf.argmax, as serve_text's (int64): Keras' argmax adds bitwise ops
    # that ONNX and LiteRT do not have.
    return {"logits": logits, "probabilities": ops.softmax(logits, axis=-1),
            "choice": tf.argmax(logits, axis=-1)}


def _choices_shape(x):
  """The shape [examples, choices, ...] of x's ids or endings."""
  if isinstance(x, tuple) and len(x) == 2:
    shape = getattr(x[1], "shape", None)
    return None if shape is None else tuple(shape)
  return targets.input_shape(x, "input_ids")


def _checked_endings(endings, where):
  """endings (a list of each context's list of endings), each text
  checked, every context with as many endings as the first, at least
  one."""
  for index, row in enumerate(endings):
    if isinstance(row, np.ndarray):
      row = row.tolist()
    if not isinstance(row, (list, tuple)):
      raise ValueError(f"{where}: x[1][{index}] is {kind_of(row)}; expected "
                       "a list of that context's endings")
    if not row:
      raise ValueError(f"{where}: x[1][{index}] holds no endings")
    if len(row) != len(endings[0]):
      raise ValueError(f"{where}: x[1][{index}] holds {len(row)} endings, "
                       f"x[1][0] {len(endings[0])}; every context of a call "
                       "needs the same number")
    for position, ending in enumerate(row):
      checked_text(ending, f"x[1][{index}][{position}]", where)
  return [list(row) for row in endings]
