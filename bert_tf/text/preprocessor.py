"""BertPreprocessor: raw text to the encoder's inputs, as a Keras layer."""

import numbers
import os

import keras
import numpy as np
import tensorflow as tf

from bert_tf.text.packing import packed_texts
from bert_tf.text.tokenizer import InGraphTokenizer
from bert_tf.wordpiece import rules
from bert_tf.wordpiece import tokenizer_json

# The asset keeps the kind of its vocabulary file in its name, as
# rules.read_vocabulary tells them apart.
_VOCAB_ASSETS = ("vocab.txt", tokenizer_json.TOKENIZER_FILE)


@keras.saving.register_keras_serializable(package="bert_tf")
class BertPreprocessor(keras.layers.Layer):
  """Strings -> {input_ids, input_mask, segment_ids}, as run_classifier.

  Tokenises with the original's tokenizer or transformers' (InGraphTokenizer,
  in TensorFlow ops) and packs [CLS] a [SEP] (b [SEP]) padded to
  max_seq_length, pairs truncated longest-first (bert_tf.text.packing),
  all by the rules of the library that trained the model. It runs eagerly, in
  tf.data.map and inside a model; a SavedModel holding it needs TensorFlow
  Text's ops only.

  The vocabulary is saved inside a .keras file (an asset), so loading needs
  no path; get_config holds no path for the same reason, and from_config
  refuses one (a tampered file must not make loading read a path it
  names), so from_config alone gives a layer without a vocabulary. The
  config holds the vocabulary's size: the asset must have it, and a model
  checks it against its word embeddings.

  Args:
    vocab_file: vocab.txt, or a tokenizer.json (see InGraphTokenizer).
    do_lower_case: lower-case and strip accents, as the original.
    max_seq_length: the width of the outputs.
    vocab_size: the number of tokens of the vocabulary; by default that of
      vocab_file (a .keras file's config gives it).
    tokenization_rules: "original" (as run_classifier: FullTokenizer's
      ids, the original's packing of pairs) or "transformers" (as
      transformers' BertTokenizer, which trained Hugging Face and
      sentence-transformers models: special tokens in text kept whole,
      100-character words, its packing of pairs); see InGraphTokenizer
      and bert_tf.text.packing.

  Call: a string tensor [batch] (or a scalar) or a list of Python strings,
    or a pair (text_a, text_b) of them of one batch size. Returns int32
    tensors [batch, max_seq_length] ([max_seq_length] for a scalar).

  Example:
    >>> preprocessor = BertPreprocessor("vocab.txt", True, max_seq_length=8)
    >>> preprocessor(tf.constant(["Hello, world!"]))["input_ids"].shape
    TensorShape([1, 8])
  """

  def __init__(self, vocab_file=None, do_lower_case=True, max_seq_length=128,
               vocab_size=None, tokenization_rules=rules.ORIGINAL_RULES,
               **kwargs):
    kwargs.setdefault("trainable", False)
    kwargs.setdefault("dtype", "int32")
    super().__init__(**kwargs)
    check_max_seq_length(max_seq_length)
    self.do_lower_case = do_lower_case
    self.max_seq_length = int(max_seq_length)
    self.vocab_size = vocab_size
    self.tokenizer = InGraphTokenizer(None, do_lower_case, tokenization_rules,
                                      name="tokenizer")
    self._asset_error = ValueError("BertPreprocessor: the .keras file has "
                                   "no vocabulary asset for it")
    if vocab_file is not None:
      self._set_vocabulary(vocab_file)
    self.build()

  @property
  def tokenization_rules(self):
    return self.tokenizer.tokenization_rules

  def _set_vocabulary(self, vocab_file, what=None):
    """Reads vocab_file (a path or a rules.Vocabulary); `what` names it in
    errors, its path by default."""
    self.tokenizer.set_vocabulary(vocab_file)
    vocabulary = self.tokenizer.vocabulary
    what = what or vocabulary.path
    for token in (rules.CLS_TOKEN, rules.SEP_TOKEN):
      if token not in vocabulary.vocab:
        raise ValueError(f"{what}: has no {token} token")
    # load_vocab numbers the lines: the last line has the largest id.
    size = max(vocabulary.vocab.values()) + 1
    if self.vocab_size is not None and size != self.vocab_size:
      raise ValueError(f"{what} has {size} tokens, but the preprocessor's "
                       f"vocab_size is {self.vocab_size}")
    self.vocab_size = size
    self._vocab_bytes = vocabulary.data
    self._vocab_asset = _VOCAB_ASSETS[vocabulary.is_tokenizer_json]

  def build(self, input_shape=None):
    # No weights: the vocabulary, set by __init__ or load_assets, is all
    # the state. Keras builds a loaded layer again from its build config.
    self.tokenizer.build(None)
    self.built = True

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
    if len(texts) == 2:
      texts = _same_batch(*texts)
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
    with open(os.path.join(dir_path, self._vocab_asset), "wb") as writer:
      writer.write(self._vocab_bytes)

  def load_assets(self, dir_path):
    # Where loading a layer fails, Keras tries again under its other paths
    # (its model's attribute, its model's list of layers), which have no
    # asset (dir_path None): the first error is the one to report.
    if dir_path is None:
      raise self._asset_error
    paths = [os.path.join(dir_path, name) for name in _VOCAB_ASSETS]
    try:
      self._set_vocabulary(next((path for path in paths
                                 if os.path.exists(path)), paths[0]),
                           "the vocabulary asset")
    except ValueError as error:
      self._asset_error = error
      raise

  def get_config(self):
    config = super().get_config()
    config.update(do_lower_case=self.do_lower_case,
                  max_seq_length=self.max_seq_length,
                  vocab_size=self.vocab_size,
                  tokenization_rules=self.tokenization_rules)
    return config

  @classmethod
  def from_config(cls, config):
    if "vocab_file" in config:
      raise ValueError("BertPreprocessor config: 'vocab_file' names a path, "
                       "which a config may not; the vocabulary is the .keras "
                       "file's asset")
    config = dict(config)
    if "pair_packing" in config:  # the rules' name in older .keras files
      config.setdefault("tokenization_rules", config.pop("pair_packing"))
    return cls(**config)


def check_max_seq_length(max_seq_length):
  """Raises ValueError unless max_seq_length is an integer of at least 3
  (a string or a float would fail only at the first batch)."""
  if not is_number(max_seq_length, numbers.Integral) or max_seq_length < 3:
    raise ValueError(f"max_seq_length={max_seq_length!r}: expected an "
                     f"integer of at least 3, room for [CLS], one token and "
                     f"[SEP]")


def is_number(value, kind):
  """Whether value is a number of `kind` (numbers.Integral, numbers.Real),
  not a bool."""
  return isinstance(value, kind) and not isinstance(value, bool)


def _same_batch(text_a, text_b):
  """The pair, or an error if its texts differ in shape (the tokenizer's
  ragged ops would only say "Incompatible shapes"): at once where the batch
  sizes are known, else when the graph runs."""
  message = "BertPreprocessor: the two texts of a pair must have the same "
  if text_a.shape.rank != text_b.shape.rank:
    raise ValueError(f"{message}shape, got {text_a.shape} and "
                     f"{text_b.shape}")
  if text_a.shape.rank == 0:
    return text_a, text_b
  size_a, size_b = text_a.shape[0], text_b.shape[0]
  if size_a is not None and size_b is not None:
    if size_a != size_b:
      raise ValueError(f"{message}batch size, got {size_a} and {size_b}")
    return text_a, text_b
  sizes = [tf.shape(text_a)[0], tf.shape(text_b)[0]]
  with tf.control_dependencies([tf.debugging.assert_equal(
      *sizes, message=f"{message}batch size")]):
    return tf.identity(text_a), tf.identity(text_b)


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
  strings (str, bytes or both) or a numpy array of them becomes a string
  tensor (Keras' data adapters take numpy object arrays of str alone); so
  does each of a tuple (a pair, an embedder's columns); anything else is
  returned as it is."""
  if isinstance(x, tuple):
    return tuple(as_keras_texts(texts) for texts in x)
  if _is_text_list(x) or (isinstance(x, np.ndarray) and (
      x.dtype.kind in "US" or _is_text_list(x.ravel().tolist()))):
    return tf.constant(x, tf.string)
  return x
