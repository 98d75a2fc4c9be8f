"""BertClassifier: run_classifier's model, the encoder plus one output layer."""

import keras
import tensorflow as tf
from keras import ops

from bert_tf.layers.classification_head import ClassificationHead
from bert_tf.layers.dropout import Dropout
from bert_tf.models.encoder import EncoderModel
from bert_tf.text.preprocessor import as_keras_texts, as_text_tensors


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
    preprocessor: an optional BertPreprocessor; the model then takes raw
      text (a string tensor, or a pair of them; fit, evaluate and predict
      also take lists of Python strings) and is saved with it.

  Inputs: the encoder's dict (input_ids, input_mask, segment_ids), or, when
    the model has a preprocessor, text (which it packs).

  Outputs: a dict with logits [batch_size, num_labels] and either
    probabilities [batch_size, num_labels] (softmax) or, for regression,
    predictions [batch_size]; all float32.

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

  config_arguments = ("num_labels",)

  def __init__(self, config, num_labels, preprocessor=None, **kwargs):
    super().__init__(config, **kwargs)
    self.num_labels = num_labels
    self.preprocessor = preprocessor
    self.dropout = Dropout(0.1)
    self.output_head = ClassificationHead(
        num_classes=num_labels, initializer_range=self.config.initializer_range,
        name="output")
    self.build()

  @property
  def is_regression(self):
    return self.num_labels == 1

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
    return {"logits": logits, "probabilities": ops.softmax(logits, axis=-1)}

  def __call__(self, inputs, *args, **kwargs):
    if self.preprocessor is not None:
      inputs = as_text_tensors(inputs)
    return super().__call__(inputs, *args, **kwargs)

  def input_signature(self):
    if self.preprocessor is None:
      return super().input_signature()
    return [tf.TensorSpec([None], tf.string, name="text")]

  def fit(self, x=None, *args, **kwargs):
    return super().fit(self._texts_as_keras_takes_them(x), *args, **kwargs)

  def evaluate(self, x=None, *args, **kwargs):
    return super().evaluate(self._texts_as_keras_takes_them(x), *args,
                            **kwargs)

  def predict(self, x, *args, **kwargs):
    return super().predict(self._texts_as_keras_takes_them(x), *args,
                           **kwargs)

  def _texts_as_keras_takes_them(self, x):
    return x if self.preprocessor is None else as_keras_texts(x)

  def get_config(self):
    config = super().get_config()
    if self.preprocessor is not None:
      config["preprocessor"] = keras.saving.serialize_keras_object(
          self.preprocessor)
    return config

  @classmethod
  def constructor_arguments(cls, config):
    if "preprocessor" in config:
      config = {**config, "preprocessor": keras.saving.deserialize_keras_object(
          config["preprocessor"])}
    return config
