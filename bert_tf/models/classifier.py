"""BertClassifier: run_classifier's model, the encoder plus one output layer."""

import keras
import numpy as np
import tensorflow as tf
from keras import ops

from bert_tf.checkpoints import sentence_transformers
from bert_tf.checkpoints.names import PROBLEM_TYPES
from bert_tf.checkpoints.sentence_transformers.activations import (
    activation_or_default)
from bert_tf.layers.activations import HEAD_ACTIVATIONS
from bert_tf.layers.classification_head import ClassificationHead
from bert_tf.layers.dropout import Dropout
from bert_tf.models import targets
from bert_tf.models.argument_checks import check_labels, check_positive_int
from bert_tf.models.text_model import TextModel, checked_text, kind_of
from bert_tf.objectives import classification

# The activations a cross-encoder's scores may come through
# (sentence-transformers' CrossEncoder activation_fn).
SCORE_ACTIVATIONS = tuple(HEAD_ACTIVATIONS)


@keras.saving.register_keras_serializable(package="bert_tf")
class BertClassifier(TextModel):
  """The original run_classifier's create_model.

  Dropout 0.1 (the original's fixed rate) on the pooled output, then
  logits = pooled @ output_weights^T + output_bias, with output_weights
  [num_labels, hidden_size] and output_bias [num_labels] at the top level
  of the checkpoint, as the original names them. With num_labels=1 it is a
  regressor (STS-B): the single logit is the prediction.

  Args:
    config: a BertConfig (or its dict).
    num_labels: the number of classes, or 1 for regression.
    preprocessor: an optional BertPreprocessor (see TextModel); the model
      then takes raw text, one text or a pair (a tuple) per example.
    problem_type: as transformers' config says what the logits are for
      (names.PROBLEM_TYPES): "multi_label_classification" gives each
      label's sigmoid, "regression" (num_labels 1) the prediction, and
      "single_label_classification" a softmax; None: regression for one
      label, else a softmax.
    labels: the classes' names in row order, or None (save_pretrained
      then writes transformers' LABEL_i).
    score_activation: None, or the activation of a cross-encoder's scores
      (SCORE_ACTIVATIONS): sentence-transformers' CrossEncoder.predict
      applies it to the logits ("sigmoid" by default for one label).

  Inputs: the encoder's dict (input_ids, input_mask, segment_ids), or, when
    the model has a preprocessor, text (which it packs): a list of texts,
    a tuple (text_a, text_b) of two lists, or a list of (text_a, text_b)
    pairs (sentence-transformers' CrossEncoder.predict form).

  Outputs: a dict with logits [batch_size, num_labels] and either
    probabilities [batch_size, num_labels] (softmax, or sigmoid for
    multi-label) or, for regression, predictions [batch_size]; with a
    score_activation also scores, the activation of the logits
    ([batch_size] for one label, as CrossEncoder.predict); all float32.

  Example:
    >>> from bert_tf.config import BertConfig
    >>> config = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=2,
    ...                     num_attention_heads=2, intermediate_size=32)
    >>> model = BertClassifier(config, num_labels=3)
    >>> model({"input_ids": ops.ones((2, 4), "int32")})["probabilities"].shape
    TensorShape([2, 3])
  """

  # The original's run_classifier creates its layer outside any scope.
  checkpoint_head_names = {"output_weights": "output_head.output_weights",
                           "output_bias": "output_head.output_bias"}
  huggingface_architectures = ("BertForSequenceClassification",)

  config_arguments = ("num_labels", "problem_type", "labels",
                      "score_activation")

  def __init__(self, config, num_labels, *, preprocessor=None,
               problem_type=None, labels=None, score_activation=None,
               **kwargs):
    super().__init__(config, preprocessor=preprocessor, **kwargs)
    check_positive_int(num_labels, "num_labels", type(self).__name__)
    _check_problem_type(problem_type, num_labels, type(self).__name__)
    check_labels(labels, num_labels, type(self).__name__)
    if score_activation is not None and \
        score_activation not in SCORE_ACTIVATIONS:
      raise ValueError(f"{type(self).__name__}: score_activation="
                       f"{score_activation!r}; expected one of "
                       f"{', '.join(SCORE_ACTIVATIONS)} or None")
    self.num_labels = num_labels
    self.problem_type = problem_type
    self.labels = None if labels is None else list(labels)
    self.score_activation = score_activation
    self.dropout = Dropout(0.1)
    self.output_head = ClassificationHead(
        num_classes=num_labels, initializer_range=self.config.initializer_range,
        name="output")
    self.build()

  @property
  def is_regression(self):
    return self.problem_type == "regression" or (
        self.problem_type is None and self.num_labels == 1)

  def build(self, input_shape=None):
    self.output_head.build((None, self.config.hidden_size))
    self.built = True

  @property
  def objective(self):
    """A one-label cross-encoder's binary cross-entropy on the logit (as
    sentence-transformers' CrossEncoder trains it: BCEWithLogitsLoss); a
    regressor's squared error; a multi-label classifier's binary
    cross-entropy of each label; else softmax cross-entropy (a
    CrossEncoder's CrossEntropyLoss for several labels)."""
    if self.score_activation is not None and self.num_labels == 1 or \
        self.problem_type == "multi_label_classification":
      return classification.MultiLabelObjective()
    if self.is_regression:
      return classification.RegressionObjective()
    return classification.ClassificationObjective()

  def check_targets(self, x, y, where):
    """What compile_defaults' loss takes: a class id from 0 to num_labels
    - 1 for each example; a number for a regressor; 0 to 1 for a one-label
    cross-encoder and for each label of a multi-label classifier."""
    one = [(None,), (None, 1)]
    if self.score_activation is not None and self.num_labels == 1:
      targets.check_values(y, x, where, one, "[examples] of scores",
                           shares=True)
    elif self.is_regression:
      targets.check_values(y, x, where, one, "[examples] of numbers")
    elif self.problem_type == "multi_label_classification":
      targets.check_values(y, x, where, [(None, self.num_labels)],
                           f"[examples, {self.num_labels}] of 0 or 1",
                           shares=True)
    else:
      targets.check_class_ids(y, x, where, self.num_labels,
                              f"class ids (num_labels={self.num_labels})",
                              one, "[examples]", self.labels)

  def input_signature(self):
    if self.preprocessor is None:
      return super().input_signature()
    return self.text_input_signature(pairs=self.score_activation is not None)

  def text_input_signature(self, pairs=False):
    """export()'s raw-text signature, its inputs named as run_classifier's
    export names them: text_a, and with pairs text_b too (a
    cross-encoder's default, since it scores pairs)."""
    specs = tuple(tf.TensorSpec([None], tf.string, name=name)
                  for name in ("text_a", "text_b")[:2 if pairs else 1])
    return [specs if pairs else specs[0]]

  def text_columns(self, x, method):
    """TextModel.text_columns, and sentence-transformers' CrossEncoder
    forms too: a list of (text_a, text_b) pairs, or a numpy array [n, 2]
    of them, as the tuple of its two columns. A tuple of more than two
    columns is refused."""
    if isinstance(x, np.ndarray) and x.ndim == 2 and x.shape[1] == 2:
      x = x.tolist()  # [n, 2]: a pair a row
    if isinstance(x, list) and x and isinstance(x[0], (tuple, list)):
      return self._pair_columns(x, method)
    if isinstance(x, tuple) and len(x) > 2:
      raise ValueError(f"{self._where(method)}: x is a tuple of {len(x)} "
                       "columns; expected texts, or two columns (text_a, "
                       "text_b), or a list of (text_a, text_b) pairs")
    return super().text_columns(x, method)

  def _pair_columns(self, pairs, method):
    """The columns (text_a, text_b) of a list of pairs, each checked."""
    where = self._where(method)
    for index, pair in enumerate(pairs):
      if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        got = (f"is of length {len(pair)}"
               if isinstance(pair, (tuple, list)) else f"is {kind_of(pair)}")
        raise ValueError(f"{where}: x[{index}] {got}; expected a (text_a, "
                         "text_b) pair, as x[0]")
      for ordinal, text in zip(("first", "second"), pair):
        checked_text(text, f"x[{index}]'s {ordinal} text", where)
    return tuple(list(column) for column in zip(*pairs))

  def sentence_transformers_pipeline(self):
    """The CrossEncoder it is, for save_pretrained(format=
    "sentence-transformers"): its score_activation, else
    sentence-transformers' default (sigmoid for one label, else
    linear)."""
    if "BertForSequenceClassification" not in self.huggingface_architectures:
      return None
    return sentence_transformers.Pipeline(
        model_type=sentence_transformers.CROSS_ENCODER, transformer_dir="",
        activation=activation_or_default(self.score_activation,
                                         self.num_labels))

  def call(self, inputs, training=None):
    pooled_output = self.encoder(self.encoder_inputs(inputs),
                                 training=training)["pooled_output"]
    logits = ops.cast(self.output_head(
        self.dropout(pooled_output, training=training)), "float32")
    outputs = {"logits": logits}
    if self.is_regression:
      outputs["predictions"] = logits[:, 0]
    elif self.problem_type == "multi_label_classification":
      outputs["probabilities"] = ops.sigmoid(logits)
    else:
      outputs["probabilities"] = ops.softmax(logits, axis=-1)
    if self.score_activation is not None:
      scores = HEAD_ACTIVATIONS[self.score_activation](logits)
      outputs["scores"] = scores[:, 0] if self.num_labels == 1 else scores
    return outputs


@keras.saving.register_keras_serializable(package="bert_tf")
class BertNextSentenceClassifier(BertClassifier):
  """A BertClassifier on the pretraining next-sentence head
  (cls/seq_relationship/, two classes: 0 "IsNext", 1 "NotNext"), as
  transformers' BertForNextSentencePrediction; fine-tuned, it drops out
  the pooled output as run_classifier does."""

  checkpoint_head_names = {
      "cls/seq_relationship/output_weights": "output_head.output_weights",
      "cls/seq_relationship/output_bias": "output_head.output_bias"}
  huggingface_architectures = ("BertForNextSentencePrediction",)

  def __init__(self, config, num_labels=2, **kwargs):
    if num_labels != 2:
      raise ValueError(f"{type(self).__name__}: num_labels={num_labels!r}; "
                       "the next-sentence head has 2 classes")
    super().__init__(config, num_labels, **kwargs)


def _check_problem_type(problem_type, num_labels, model_name):
  """Raises ValueError for a problem_type the head cannot give: not one of
  PROBLEM_TYPES, or regression of more than one value."""
  if problem_type is not None and problem_type not in PROBLEM_TYPES:
    raise ValueError(f"{model_name}: problem_type={problem_type!r}; "
                     f"expected one of {', '.join(PROBLEM_TYPES)} or None")
  if problem_type == "regression" and num_labels != 1:
    raise ValueError(f"{model_name}: problem_type 'regression' predicts one "
                     f"value, but num_labels={num_labels}")
