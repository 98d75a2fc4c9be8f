"""BertClassifier: run_classifier's model, the encoder plus one output layer."""

import keras
import tensorflow as tf
from keras import ops

from bert_tf.checkpoints.names import PROBLEM_TYPES
from bert_tf.layers.classification_head import ClassificationHead
from bert_tf.layers.dropout import Dropout
from bert_tf.models.base import check_labels, check_positive_int
from bert_tf.models.encoder import EncoderModel
from bert_tf.text.preprocessor import (BertPreprocessor, as_keras_texts,
                                       as_text_tensors)


@keras.saving.register_keras_serializable(package="bert_tf")
class BertClassifier(EncoderModel):
  """The original run_classifier's create_model.

  Dropout 0.1 (the original's fixed rate) on the pooled output, then
  logits = pooled @ output_weights^T + output_bias, with output_weights
  [num_labels, hidden_size] and output_bias [num_labels] at the top level
  of the checkpoint, as the original names them. With num_labels=1 it is a
  regressor (STS-B): the single logit is the prediction.

  Args:
    config: a BertConfig (or its dict).
    num_labels: the number of classes, or 1 for regression.
    problem_type: as transformers' config says what the logits are for
      (names.PROBLEM_TYPES): "multi_label_classification" gives each
      label's sigmoid, "regression" (num_labels 1) the prediction, and
      "single_label_classification" a softmax; None: regression for one
      label, else a softmax.
    labels: the classes' names in row order, or None (save_pretrained
      then writes transformers' LABEL_i).
    preprocessor: an optional BertPreprocessor, of no more tokens than
      config.vocab_size and no longer sequences than
      config.max_position_embeddings; the model then takes raw text (a
      string tensor, or a pair of them; fit, evaluate and predict also take
      lists of Python strings) and is saved with it.

  Inputs: the encoder's dict (input_ids, input_mask, segment_ids), or, when
    the model has a preprocessor, text (which it packs).

  Outputs: a dict with logits [batch_size, num_labels] and either
    probabilities [batch_size, num_labels] (softmax, or sigmoid for
    multi-label) or, for regression, predictions [batch_size]; all float32.

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

  config_arguments = ("num_labels", "problem_type", "labels")

  def __init__(self, config, num_labels, preprocessor=None, problem_type=None,
               labels=None, **kwargs):
    super().__init__(config, **kwargs)
    check_positive_int(num_labels, "num_labels", type(self).__name__)
    _check_problem_type(problem_type, num_labels, type(self).__name__)
    check_labels(labels, num_labels, type(self).__name__)
    if preprocessor is not None:
      self._check_preprocessor(preprocessor)
    self.num_labels = num_labels
    self.problem_type = problem_type
    self.labels = None if labels is None else list(labels)
    self.preprocessor = preprocessor
    self.dropout = Dropout(0.1)
    self.output_head = ClassificationHead(
        num_classes=num_labels, initializer_range=self.config.initializer_range,
        name="output")
    self.build()

  def _check_preprocessor(self, preprocessor):
    """Raises ValueError for a preprocessor whose ids or sequences the
    encoder's embeddings cannot take (on a GPU, ids past the table read
    zeros, silently)."""
    name = type(self).__name__
    if not isinstance(preprocessor, BertPreprocessor):
      raise ValueError(f"{name}: preprocessor is a "
                       f"{type(preprocessor).__name__} layer, not a "
                       "BertPreprocessor")
    config = self.config
    if preprocessor.max_seq_length > config.max_position_embeddings:
      raise ValueError(f"{name}: the preprocessor's max_seq_length "
                       f"{preprocessor.max_seq_length} is over the "
                       "positions the encoder has: max_position_embeddings "
                       f"is {config.max_position_embeddings}")
    if (preprocessor.vocab_size is not None
        and preprocessor.vocab_size > config.vocab_size):
      raise ValueError(f"{name}: the preprocessor's vocabulary has "
                       f"{preprocessor.vocab_size} tokens, but the encoder's "
                       f"vocab_size is {config.vocab_size}")

  @property
  def is_regression(self):
    return self.problem_type == "regression" or (
        self.problem_type is None and self.num_labels == 1)

  def build(self, input_shape=None):
    self.output_head.build((None, self.config.hidden_size))
    self.built = True

  def call(self, inputs, training=None):
    if self.preprocessor is not None and not isinstance(inputs, dict):
      inputs = self.preprocessor(inputs)
    pooled_output = self.encoder(inputs, training=training)["pooled_output"]
    logits = ops.cast(self.output_head(
        self.dropout(pooled_output, training=training)), "float32")
    if self.is_regression:
      return {"logits": logits, "predictions": logits[:, 0]}
    if self.problem_type == "multi_label_classification":
      return {"logits": logits, "probabilities": ops.sigmoid(logits)}
    return {"logits": logits, "probabilities": ops.softmax(logits, axis=-1)}

  def __call__(self, inputs, *args, **kwargs):
    if self.preprocessor is not None:
      inputs = as_text_tensors(inputs)
    return super().__call__(inputs, *args, **kwargs)

  def input_signature(self):
    if self.preprocessor is None:
      return super().input_signature()
    return [tf.TensorSpec([None], tf.string, name="text")]

  def keras_inputs(self, x, method):
    if self.preprocessor is not None:
      x = as_keras_texts(x)
    return super().keras_inputs(x, method)

  def get_config(self):
    config = super().get_config()
    if self.preprocessor is not None:
      config["preprocessor"] = keras.saving.serialize_keras_object(
          self.preprocessor)
    return config

  @classmethod
  def constructor_arguments(cls, config):
    if "preprocessor" in config:
      config = {**config, "preprocessor": _preprocessor_from_config(
          config["preprocessor"])}
    return config


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


def _preprocessor_from_config(serialized):
  """The BertPreprocessor of a serialized config; any other class is
  refused before it is built (it might read a path its config names)."""
  name = serialized.get("registered_name") if isinstance(serialized,
                                                         dict) else None
  registered = keras.saving.get_registered_object(name) if name else None
  if not (isinstance(registered, type)
          and issubclass(registered, BertPreprocessor)):
    raise ValueError(f"BertClassifier config: preprocessor {name!r} is not a "
                     "BertPreprocessor")
  return keras.saving.deserialize_keras_object(serialized)
