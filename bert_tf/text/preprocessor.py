"""BertPreprocessor: raw text to the encoder's inputs, as a Keras layer."""

import os

import keras
import numpy as np
import tensorflow as tf

from bert_tf import tokenization_rules
from bert_tf.text.packing import packed_texts
from bert_tf.text.tokenizer import InGraphTokenizer

_VOCAB_ASSET = "vocab.txt"


@keras.saving.register_keras_serializable(package="bert_tf")
class BertPreprocessor(keras.layers.Layer):
  """Strings -> {input_ids, input_mask, segment_ids}, as run_classifier.

  Tokenises with the original's tokenizer (InGraphTokenizer, in TensorFlow
  ops) and packs [CLS] a [SEP] (b [SEP]) padded to max_seq_length, pairs
  truncated longest-first (bert_tf.text.packing). It runs eagerly, in
  tf.data.map and inside a model; a SavedModel holding it needs TensorFlow
  Text's ops only.

  The vocabulary is saved inside a .keras file (an asset), so loading needs
  no path; get_config holds no path for the same reason, so from_config
  alone gives a layer without a vocabulary.

  Args:
    vocab_file: vocab.txt.
    do_lower_case: lower-case and strip accents, as the original.
    max_seq_length: the width of the outputs.

  Call: a string tensor [batch] (or a scalar) or a list of Python strings,
    or a pair (text_a, text_b) of them. Returns int32 tensors
    [batch, max_seq_length] ([max_seq_length] for a scalar).

  Example:
    >>> preprocessor = BertPreprocessor("vocab.txt", True, max_seq_length=8)
    >>> preprocessor(tf.constant(["Hello, world!"]))["input_ids"].shape
    TensorShape([1, 8])
  """

  def __init__(self, vocab_file=None, do_lower_case=True, max_seq_length=128,
               **kwargs):
    kwargs.setdefault("trainable", False)
    kwargs.setdefault("dtype", "int32")
    super().__init__(**kwargs)
    if max_seq_length < 3:
      raise ValueError(f"max_seq_length={max_seq_length}: a sequence needs "
                       "room for [CLS], one token and [SEP]")
    self.do_lower_case = do_lower_case
    self.max_seq_length = max_seq_length
    self.tokenizer = InGraphTokenizer(None, do_lower_case, name="tokenizer")
    if vocab_file is not None:
      self._set_vocabulary(vocab_file)

  def _set_vocabulary(self, vocab_file):
    self.tokenizer.set_vocabulary(vocab_file)
    for token in (tokenization_rules.CLS_TOKEN, tokenization_rules.SEP_TOKEN):
      if token not in self.tokenizer.vocab:
        raise ValueError(f"{vocab_file}: has no {token} token")
    with tf.io.gfile.GFile(vocab_file, "rb") as reader:
      self._vocab_bytes = reader.read()

  def __call__(self, inputs, **kwargs):
    return super().__call__(as_text_tensors(inputs), **kwargs)

  def call(self, inputs):
    if self.tokenizer.vocab_file is None:
      raise ValueError("BertPreprocessor has no vocabulary: give vocab_file, "
                       "or load the layer from a .keras file")
    texts = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if len(texts) not in (1, 2):
      raise ValueError(f"BertPreprocessor takes one text or a pair, got "
                       f"{len(texts)}")
    texts = [tf.convert_to_tensor(text, tf.string) for text in texts]
    is_scalar = texts[0].shape.rank == 0
    if is_scalar:
      texts = [text[None] for text in texts]
    packed = packed_texts(self.tokenizer, self.max_seq_length, *texts)
    if is_scalar:
      return {name: value[0] for name, value in packed.items()}
    return packed

  def compute_output_spec(self, inputs):
    first = inputs[0] if isinstance(inputs, (list, tuple)) else inputs
    shape = tuple(first.shape) + (self.max_seq_length,)
    return {name: keras.KerasTensor(shape, dtype="int32")
            for name in ("input_ids", "input_mask", "segment_ids")}

  def save_assets(self, dir_path):
    with open(os.path.join(dir_path, _VOCAB_ASSET), "wb") as writer:
      writer.write(self._vocab_bytes)

  def load_assets(self, dir_path):
    self._set_vocabulary(os.path.join(dir_path, _VOCAB_ASSET))

  def get_config(self):
    config = super().get_config()
    config.update(do_lower_case=self.do_lower_case,
                  max_seq_length=self.max_seq_length)
    return config


def _is_text_list(x):
  return isinstance(x, list) and bool(x) and all(
      isinstance(text, (str, bytes)) for text in x)


def as_text_tensors(inputs):
  """A list of Python strings as a string tensor, each of a pair (a tuple)
  too; anything else as it is. Keras' layers and models take tensors, not
  lists of strings."""
  if isinstance(inputs, tuple):
    return tuple(as_text_tensors(texts) for texts in inputs)
  return tf.constant(inputs) if _is_text_list(inputs) else inputs


def as_keras_texts(x):
  """Texts as Keras' fit, evaluate and predict take them: a list of Python
  strings or a numpy str/bytes array becomes a numpy object array (Keras'
  data adapters refuse the others); a pair (text_a, text_b) each; anything
  else is returned as it is."""
  if isinstance(x, tuple) and len(x) == 2:
    return tuple(as_keras_texts(texts) for texts in x)
  if _is_text_list(x):
    return np.array(x, dtype=object)
  if isinstance(x, np.ndarray) and x.dtype.kind in "US":
    return x.astype(object)
  return x
