"""Many texts to WordPiece ids by the faster exact path: a FullTokenizer's
pure-Python encode_many (on every core for a large batch), or the in-graph
tokenizer compiled (TensorFlow ops on every core) for a batch large enough
to pay for building it. Both give the original's ids.
"""

import os

import tensorflow as tf

from bert_tf.text.tokenizer import InGraphTokenizer, sharded_tokenize_fn
from bert_tf.wordpiece import fast_paths
from bert_tf.wordpiece.rules import convert_to_unicode

# Texts the compiled path takes at once.
_FAST_BATCH_SIZE = 16384
# encode_batch builds the compiled path for a batch of this many characters
# or more: below, building it costs more time than its speed saves over the
# Python path (docs/performance.md, from benchmarks/tokenizers.py). Each
# such batch builds its own: keeping it for the next batches of the same
# tokenizer saves no time (benchmarks/compiled_tokenizer_cache.py).
_COMPILE_MIN_CHARS = 1 << 22


def encode_batch(tokenizer, texts):
  """Token ids of each text, as tokenizer.encode(text), by the faster
  exact path for the batch: CompiledEncoder for _COMPILE_MIN_CHARS
  characters or more, else tokenizer.encode_many. Bytes count by
  length."""
  texts = list(texts)
  if sum(map(len, texts)) >= _COMPILE_MIN_CHARS:
    return CompiledEncoder(tokenizer)(texts)
  return tokenizer.encode_many(texts)


class CompiledEncoder:
  """A FullTokenizer's vocabulary and casing as an InGraphTokenizer,
  traced to run on every core (building it takes seconds): called with
  texts, their ids as tokenizer.encode gives them."""

  def __init__(self, tokenizer):
    self.tokenizer = tokenizer
    self.in_graph = InGraphTokenizer(tokenizer.vocabulary,
                                     tokenizer.do_lower_case)
    self._tokenize = sharded_tokenize_fn(self.in_graph, os.cpu_count() or 1)

  def __call__(self, texts):
    """Token ids of each text through the compiled tokenizer, falling
    back to tokenizer.encode for any text whose result it cannot guarantee
    (lone surrogates; characters whose lower-casing differs between
    Python's and TensorFlow's Unicode versions and that the vocabulary
    covers)."""
    texts = [convert_to_unicode(text) for text in texts]
    sensitive_chars = self.in_graph.sensitive_chars
    if not sensitive_chars:
      try:  # the common case: every text goes through the compiled path
        return self._compiled_ids([text.encode("utf-8") for text in texts])
      except UnicodeEncodeError:  # lone surrogates: sort texts one by one
        pass
    results = [None] * len(texts)
    fast_indices, fast_texts = [], []
    for index, text in enumerate(texts):
      encoded = fast_paths.encode_for_fast_path(text, sensitive_chars)
      if encoded is None:
        results[index] = self.tokenizer.encode(text)
      else:
        fast_indices.append(index)
        fast_texts.append(encoded)
    for index, ids in zip(fast_indices, self._compiled_ids(fast_texts)):
      results[index] = ids
    return results

  def _compiled_ids(self, encoded_texts):
    """UTF-8 texts -> id lists."""
    results = []
    for start in range(0, len(encoded_texts), _FAST_BATCH_SIZE):
      ids = self._tokenize(tf.constant(
          encoded_texts[start:start + _FAST_BATCH_SIZE], tf.string))
      values = ids.flat_values.numpy().tolist()
      splits = ids.row_splits.numpy().tolist()
      results.extend(values[begin:end]
                     for begin, end in zip(splits[:-1], splits[1:]))
    return results
