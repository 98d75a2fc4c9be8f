"""What a model that takes raw text shares: an optional BertPreprocessor,
checked against the encoder, called on text, saved with the model and
given to export() as a string input."""

import keras
import numpy as np
import tensorflow as tf

from bert_tf.models.encoder import EncoderModel
from bert_tf.text.preprocessor import (BertPreprocessor, as_keras_texts,
                                       as_text_tensors)
from bert_tf.wordpiece import rules


class TextModel(EncoderModel):
  """An EncoderModel with an optional preprocessor.

  Args:
    config: a BertConfig (or its dict).
    preprocessor: a BertPreprocessor, of no more tokens than
      config.vocab_size and no longer sequences than
      config.max_position_embeddings, or None. With one the model takes
      raw text (a string tensor, or a tuple of them; fit, evaluate and
      predict also take lists of Python strings) and is saved with it.
  """

  # The class of preprocessor it takes (from_pretrained makes one).
  preprocessor_class = BertPreprocessor

  def __init__(self, config, *, preprocessor=None, **kwargs):
    super().__init__(config, **kwargs)
    if preprocessor is not None:
      self._check_preprocessor(preprocessor)
    self.preprocessor = preprocessor

  def _check_preprocessor(self, preprocessor):
    """Raises ValueError for a preprocessor whose ids or sequences the
    encoder's embeddings cannot take (on a GPU, ids past the table read
    zeros, silently)."""
    name = type(self).__name__
    expected = self.preprocessor_class
    if not isinstance(preprocessor, expected):
      raise ValueError(f"{name}: preprocessor is a "
                       f"{type(preprocessor).__name__} layer, not a "
                       f"{expected.__name__}")
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

  def encoder_inputs(self, inputs):
    """The encoder's dict: `inputs` as they are, or text packed by the
    preprocessor."""
    if self.preprocessor is not None and not isinstance(inputs, dict):
      return self.preprocessor(inputs)
    return inputs

  def __call__(self, inputs, *args, **kwargs):
    if self.preprocessor is None:
      self.check_not_text(inputs, "model")
    else:
      self._check_not_bare_text(inputs, "model")
      inputs = as_text_tensors(self.text_columns(inputs, "model"))
    return super().__call__(inputs, *args, **kwargs)

  def input_signature(self):
    if self.preprocessor is None:
      return super().input_signature()
    return [tf.TensorSpec([None], tf.string, name="text")]

  def keras_inputs(self, x, method):
    if self.preprocessor is not None:
      self._check_not_bare_text(x, method)
      x = as_keras_texts(self.text_columns(x, method))
    return super().keras_inputs(x, method)

  @property
  def takes_text(self):
    return self.preprocessor is not None

  def text_advice(self):
    return (f"{type(self).__name__}.from_pretrained(model_dir), or "
            f"preprocessor=bert_tf.{self.preprocessor_class.__name__}"
            "(vocab_file), gives a model that takes text")

  def text_columns(self, x, method):
    """x with each Python list or tuple of texts (x itself, or each column
    of a tuple of them) as a list, checked text by text (method: where x
    was given, for errors); anything else as it is."""
    if isinstance(x, tuple):
      return tuple(self._text_column(column, f"x[{index}]", method)
                   for index, column in enumerate(x))
    return self._text_column(x, "x", method)

  def _text_column(self, column, where, method):
    if isinstance(column, np.ndarray) and column.ndim > 1:
      raise ValueError(f"{self._where(method)}: {where} is an array of "
                       f"shape {column.shape}; expected texts [batch]")
    if not isinstance(column, (list, tuple)):
      return column
    return [checked_text(text, f"{where}[{index}]", self._where(method))
            for index, text in enumerate(column)]

  def _where(self, method):
    """How errors name the call: "BertClassifier.predict", or the class
    alone for a call of the model."""
    name = type(self).__name__
    return name if method == "model" else f"{name}.{method}"

  def _check_not_bare_text(self, x, method):
    """Raises ValueError for one Python string (or a pair of them) where a
    batch is expected (method: "predict", say, or "model" for a call):
    Keras' own error does not say what to pass."""
    texts = x if isinstance(x, tuple) else (x,)
    if not texts or not all(isinstance(text, (str, bytes)) for text in texts):
      return
    batch = tuple([text] for text in x) if isinstance(x, tuple) else [x]
    raise ValueError(f"{self._where(method)}: one text, not a batch; pass a "
                     f"list: {method}({batch!r})")

  def export(self, filepath, format="tf_saved_model", verbose=None,
             input_signature=None, **kwargs):
    """BertKerasModel.export; a raw-text signature only to a SavedModel:
    TensorFlow Text's ops have no ONNX or LiteRT form, so those exports
    take ids (input_signature=ids_input_signature())."""
    strings = [spec for spec in tf.nest.flatten(
        input_signature or self.input_signature()) if spec.dtype == tf.string]
    if strings and format in ("onnx", "litert"):
      raise ValueError(
          f"{type(self).__name__}.export(format={format!r}): its "
          "preprocessor's TensorFlow Text ops have no "
          f"{'ONNX' if format == 'onnx' else 'LiteRT'} form; export ids "
          f"instead, export(path, format={format!r}, input_signature="
          f"model.ids_input_signature()), and tokenize on the client with "
          f"{self._client_tokenizers()}")
    return super().export(filepath, format=format, verbose=verbose,
                          input_signature=input_signature, **kwargs)

  def _client_tokenizers(self):
    """What gives this model's ids outside its graph: its preprocessor;
    and bert_tf.tokenization, which follows the original's rules, where
    the model does too."""
    if self.preprocessor.tokenization_rules == rules.ORIGINAL_RULES:
      return "model.preprocessor or bert_tf.tokenization"
    return ("model.preprocessor (bert_tf.tokenization follows the "
            "original's rules, not this model's transformers' rules)")

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
          config["preprocessor"], cls.__name__)}
    return config


def checked_text(text, where, method_name):
  """text, where it is one (a str, or bytes), else a ValueError naming
  where it is: None, another type, or a str holding a lone surrogate (from
  a JSON escape, say), which UTF-8 cannot encode."""
  if isinstance(text, bytes):
    return text
  if not isinstance(text, str):
    raise ValueError(f"{method_name}: {where} is {kind_of(text)}; expected "
                     "a str")
  try:
    text.encode("utf-8")
  except UnicodeEncodeError:
    raise ValueError(f"{method_name}: {where} holds a lone surrogate, "
                     "which UTF-8 cannot encode") from None
  return text


def kind_of(value):
  """What a message calls a value of the wrong type: None, or its type's
  name (never its repr, which may be long)."""
  return "None" if value is None else type(value).__name__


def _preprocessor_from_config(serialized, model_name):
  """The BertPreprocessor of a serialized config; any other class is
  refused before it is built (it might read a path its config names)."""
  name = serialized.get("registered_name") if isinstance(serialized,
                                                         dict) else None
  registered = keras.saving.get_registered_object(name) if name else None
  if not (isinstance(registered, type)
          and issubclass(registered, BertPreprocessor)):
    raise ValueError(f"{model_name} config: preprocessor {name!r} is not a "
                     "BertPreprocessor")
  return keras.saving.deserialize_keras_object(serialized)
