"""Many texts to WordPiece ids by the faster exact path: a FullTokenizer's
pure-Python encode_many (on every core for a large batch), or the in-graph
tokenizer compiled (TensorFlow ops on every core) for a batch large enough
to pay for building it. Both give the original's ids.
"""

import os
import weakref

import tensorflow as tf

from bert_tf.text.tokenizer import InGraphTokenizer, sharded_tokenize_fn
from bert_tf.wordpiece import fast_paths
from bert_tf.wordpiece.rules import convert_to_unicode

# Texts the compiled path takes at once.
_FAST_BATCH_SIZE = 16384
# encode_batch builds the compiled path for a batch of this many characters
# or more: below, building it costs more time than its speed saves over the
# Python path (docs/performance.md, from benchmarks/tokenizers.py).
_COMPILE_MIN_CHARS = 1 << 22
# FullTokenizer -> its compiled path, built once, dropped with it.
_COMPILED = weakref.WeakKeyDictionary()


def encode_batch(tokenizer, texts):
  """Token ids of each text, as tokenizer.encode(text), by the faster
  exact path for the batch: the compiled one once it is built for this
  tokenizer or for _COMPILE_MIN_CHARS characters or more, else
  tokenizer.encode_many. Bytes count by length."""
  texts = list(texts)
  if tokenizer in _COMPILED or sum(map(len, texts)) >= _COMPILE_MIN_CHARS:
    return encode_compiled(tokenizer, texts)
  return tokenizer.encode_many(texts)


def encode_compiled(tokenizer, texts):
  """Token ids of each text through the compiled in-graph tokenizer,
  falling back to tokenizer.encode for any text whose result it cannot
  guarantee (lone surrogates; characters whose lower-casing differs
  between Python's and TensorFlow's Unicode versions and that the
  vocabulary covers)."""
  compiled = _compiled(tokenizer)
  texts = [convert_to_unicode(text) for text in texts]
  sensitive_chars = compiled.in_graph.sensitive_chars
  if not sensitive_chars:
    try:  # the common case: every text goes through the compiled path
      return compiled([text.encode("utf-8") for text in texts])
    except UnicodeEncodeError:  # lone surrogates: sort texts one by one
      pass
  results = [None] * len(texts)
  fast_indices, fast_texts = [], []
  for index, text in enumerate(texts):
    encoded = fast_paths.encode_for_fast_path(text, sensitive_chars)
    if encoded is None:
      results[index] = tokenizer.encode(text)
    else:
      fast_indices.append(index)
      fast_texts.append(encoded)
  for index, ids in zip(fast_indices, compiled(fast_texts)):
    results[index] = ids
  return results


class _CompiledPath:
  """A tokenizer's vocabulary and casing as an InGraphTokenizer, traced
  to run on every core: UTF-8 texts -> id lists."""

  def __init__(self, tokenizer):
    self.in_graph = InGraphTokenizer(tokenizer.vocabulary,
                                     tokenizer.do_lower_case)
    self._tokenize = sharded_tokenize_fn(self.in_graph, os.cpu_count() or 1)

  def __call__(self, encoded_texts):
    results = []
    for start in range(0, len(encoded_texts), _FAST_BATCH_SIZE):
      ids = self._tokenize(tf.constant(
          encoded_texts[start:start + _FAST_BATCH_SIZE], tf.string))
      values = ids.flat_values.numpy().tolist()
      splits = ids.row_splits.numpy().tolist()
      results.extend(values[begin:end]
                     for begin, end in zip(splits[:-1], splits[1:]))
    return results


def _compiled(tokenizer):
  if tokenizer not in _COMPILED:
    _COMPILED[tokenizer] = _CompiledPath(tokenizer)
  return _COMPILED[tokenizer]
