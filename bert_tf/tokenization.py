"""The original BERT tokenizer (tokenization.py), with identical output.

Text -> BasicTokenizer (clean, split CJK, whitespace, lower-case and strip
accents, split punctuation) -> WordpieceTokenizer (greedy longest match
against vocab.txt). The character classes (tokenization_rules, shared with
the in-graph tokenizer) are the original's exact definitions, which differ
from Python's and from Unicode's usual ones in ways that change tokens (e.g.
"$" and "^" are punctuation here, Zl/Zp split words only through str.split).
"""

import os
import re

# The shared rules are part of the original module's API.
from bert_tf.tokenization_rules import (  # pylint: disable=unused-import
    CJK_RANGES, MAX_INPUT_CHARS_PER_WORD, UNK_TOKEN, cleaned_char,
    convert_to_unicode, is_chinese_char, is_control, is_punctuation,
    is_whitespace, load_vocab, strip_accents)

# Texts the fast path sends to TensorFlow at once.
_FAST_BATCH_SIZE = 16384
# Words FullTokenizer remembers the pieces of before it starts afresh.
_MAX_CACHED_WORDS = 1 << 20

# Names of the released checkpoints the original knew the casing of.
_LOWER_CASED_MODELS = ("uncased_L-24_H-1024_A-16", "uncased_L-12_H-768_A-12",
                       "multilingual_L-12_H-768_A-12",
                       "chinese_L-12_H-768_A-12")
_CASED_MODELS = ("cased_L-12_H-768_A-12", "cased_L-24_H-1024_A-16",
                 "multi_cased_L-12_H-768_A-12")

def validate_case_matches_checkpoint(do_lower_case, init_checkpoint):
  """Raises when do_lower_case contradicts a released checkpoint's name."""
  if not init_checkpoint:
    return
  match = re.match("^.*?([A-Za-z0-9_-]+)/bert_model.ckpt", init_checkpoint)
  if match is None:
    return
  model_name = match.group(1)
  if model_name in _LOWER_CASED_MODELS and not do_lower_case:
    case_name, actual, expected = "lowercased", "False", "True"
  elif model_name in _CASED_MODELS and do_lower_case:
    case_name, actual, expected = "cased", "True", "False"
  else:
    return
  raise ValueError(
      f"You passed in `--do_lower_case={actual}` with `--init_checkpoint="
      f"{init_checkpoint}`. However, `{model_name}` seems to be a {case_name} "
      f"model, so you should pass in `--do_lower_case={expected}` so that the "
      f"fine-tuning matches how the model was pre-training.")


# In Python 3 the original's printable_text is the same conversion.
printable_text = convert_to_unicode


def convert_by_vocab(vocab, items):
  """Maps tokens to ids or ids to tokens; a KeyError names what is missing."""
  return [vocab[item] for item in items]


def convert_tokens_to_ids(vocab, tokens):
  return convert_by_vocab(vocab, tokens)


def convert_ids_to_tokens(inv_vocab, ids):
  return convert_by_vocab(inv_vocab, ids)


def whitespace_tokenize(text):
  """Splits on Python whitespace (str.split), as the original."""
  return text.split()


class BasicTokenizer:
  """Cleans text and splits it on whitespace and punctuation.

  Args:
    do_lower_case: lower-case and strip accents (NFD, drop Mn).
  """

  def __init__(self, do_lower_case=True):
    self.do_lower_case = do_lower_case

  def tokenize(self, text):
    text = "".join(map(cleaned_char, convert_to_unicode(text)))
    return [token for word in whitespace_tokenize(text)
            for token in self.tokenize_word(word)]

  def tokenize_word(self, word):
    """The steps after cleaning, which act on each word on its own: lower-
    casing and accent stripping, then punctuation split off."""
    if self.do_lower_case:
      word = strip_accents(word.lower())
    return whitespace_tokenize(" ".join(_split_on_punctuation(word)))


class WordpieceTokenizer:
  """Greedy longest-match-first WordPiece, "##" marking continuations.

  A word becomes `unk_token` when it is longer than max_input_chars_per_word
  characters or when any part of it has no piece in the vocabulary.
  """

  def __init__(self, vocab, unk_token=UNK_TOKEN,
               max_input_chars_per_word=MAX_INPUT_CHARS_PER_WORD):
    self.vocab = vocab
    self.unk_token = unk_token
    self.max_input_chars_per_word = max_input_chars_per_word

  def tokenize(self, text):
    output_tokens = []
    for word in whitespace_tokenize(convert_to_unicode(text)):
      output_tokens.extend(self._word_pieces(word))
    return output_tokens

  def _word_pieces(self, word):
    if len(word) > self.max_input_chars_per_word:
      return [self.unk_token]
    pieces = []
    start = 0
    while start < len(word):
      for end in range(len(word), start, -1):
        piece = word[start:end] if start == 0 else "##" + word[start:end]
        if piece in self.vocab:
          pieces.append(piece)
          start = end
          break
      else:
        return [self.unk_token]
    return pieces


class FullTokenizer:
  """BasicTokenizer then WordpieceTokenizer, over a vocab.txt.

  `tokenize` and `encode` compute the original's result in pure Python,
  remembering the pieces of each whitespace-separated word: after the
  per-character cleaning (one str.translate) every word is tokenised
  independently of the rest of the text, so a repeated word costs a lookup.
  `tokenize_batch` and `encode_batch` give identical results for many texts
  at once through the compiled in-graph tokenizer
  (bert_tf.text.InGraphTokenizer), falling back to the Python path for any
  text whose result the compiled path cannot guarantee (lone surrogates;
  characters whose lower-casing differs between Python's and TensorFlow's
  Unicode versions and that the vocabulary covers).

  Example:
    >>> tokenizer = FullTokenizer("vocab.txt", do_lower_case=True)
    >>> tokenizer.tokenize("UNwant\\u00E9d,running")
    ['un', '##want', '##ed', ',', 'runn', '##ing']
    >>> tokenizer.encode_batch(["UNwant\\u00E9d,running", "hello"])
    [[7, 4, 5, 10, 8, 9], [13]]
  """

  def __init__(self, vocab_file, do_lower_case=True):
    self.vocab_file = vocab_file
    self.do_lower_case = do_lower_case
    self.vocab = load_vocab(vocab_file)
    self.inv_vocab = {index: token for token, index in self.vocab.items()}
    self.basic_tokenizer = BasicTokenizer(do_lower_case=do_lower_case)
    self.wordpiece_tokenizer = WordpieceTokenizer(vocab=self.vocab)
    self._in_graph = None  # built on first use of the fast path
    self._compiled = None
    self._cleaning = {}  # str.translate table of cleaned_char
    self._classified = set()
    self._classify_chars(chr(code) for code in range(128))
    self._word_pieces = {}
    self._word_tokens = {}

  def tokenize(self, text):
    return self._per_word(text, self._word_pieces, self._pieces_of)

  def basic_tokenize(self, text):
    """basic_tokenizer.tokenize(text), as fast as tokenize (SQuAD aligns
    its answers with it, as the original's get_final_text)."""
    return self._per_word(text, self._word_tokens,
                          self.basic_tokenizer.tokenize_word)

  def _per_word(self, text, cache, tokenize_word):
    """tokenize_word of each cleaned word of text, concatenated; each word's
    result remembered in cache."""
    text = convert_to_unicode(text)
    if not text.isascii():
      self._classify_chars(set(text) - self._classified)
    tokens = []
    for word in text.translate(self._cleaning).split():
      word_tokens = cache.get(word)
      if word_tokens is None:
        word_tokens = _remember(cache, word, tokenize_word(word))
      tokens.extend(word_tokens)
    return tokens

  def encode(self, text):
    """convert_tokens_to_ids(tokenize(text))."""
    return self.convert_tokens_to_ids(self.tokenize(text))

  def _classify_chars(self, chars):
    """Adds the characters' cleaned_char to the cleaning table."""
    for char in chars:
      cleaned = cleaned_char(char)
      if cleaned != char:
        self._cleaning[ord(char)] = cleaned
      self._classified.add(char)

  def _pieces_of(self, word):
    """BasicTokenizer's per-word steps, then WordPiece, for a cleaned word
    (whose basic tokens basic_tokenize then finds remembered)."""
    tokens = self._word_tokens.get(word)
    if tokens is None:
      tokens = _remember(self._word_tokens, word,
                         self.basic_tokenizer.tokenize_word(word))
    return [piece for token in tokens
            for piece in self.wordpiece_tokenizer.tokenize(token)]

  def tokenize_batch(self, texts):
    """[tokenize(text) for text in texts], computed by the fast path."""
    return [self.convert_ids_to_tokens(ids) for ids in self.encode_batch(texts)]

  def encode_batch(self, texts):
    """Token ids of each text, as convert_tokens_to_ids(tokenize(text))."""
    texts = [convert_to_unicode(text) for text in texts]
    sensitive_chars = self._in_graph_tokenizer().sensitive_chars
    if not sensitive_chars:
      try:  # the common case: every text goes through the compiled path
        return self._run_compiled([text.encode("utf-8") for text in texts])
      except UnicodeEncodeError:  # lone surrogates: sort texts one by one
        pass
    results = [None] * len(texts)
    fast_indices, fast_texts = [], []
    for index, text in enumerate(texts):
      encoded = _encode_for_fast_path(text, sensitive_chars)
      if encoded is None:
        results[index] = self.encode(text)
      else:
        fast_indices.append(index)
        fast_texts.append(encoded)
    for index, ids in zip(fast_indices, self._run_compiled(fast_texts)):
      results[index] = ids
    return results

  def _in_graph_tokenizer(self):
    if self._in_graph is None:
      # Imported here: bert_tf.text builds on this module, and TensorFlow
      # is only needed by this path.
      import tensorflow  # pylint: disable=g-import-not-at-top
      from bert_tf.text import tokenizer as in_graph
      self._tf = tensorflow
      self._in_graph = in_graph.InGraphTokenizer(self.vocab_file,
                                                 self.do_lower_case)
      self._compiled = in_graph.sharded_tokenize_fn(self._in_graph,
                                                    os.cpu_count() or 1)
    return self._in_graph

  def _run_compiled(self, encoded_texts):
    """Id lists for valid UTF-8 texts, _FAST_BATCH_SIZE texts per call."""
    results = []
    for start in range(0, len(encoded_texts), _FAST_BATCH_SIZE):
      ids = self._compiled(self._tf.constant(
          encoded_texts[start:start + _FAST_BATCH_SIZE], self._tf.string))
      values = ids.flat_values.numpy().tolist()
      splits = ids.row_splits.numpy().tolist()
      results.extend(values[begin:end]
                     for begin, end in zip(splits[:-1], splits[1:]))
    return results

  def convert_tokens_to_ids(self, tokens):
    return convert_by_vocab(self.vocab, tokens)

  def convert_ids_to_tokens(self, ids):
    return convert_by_vocab(self.inv_vocab, ids)


def _remember(cache, word, tokens):
  """cache[word] = tokens, starting afresh when the cache is full."""
  if len(cache) >= _MAX_CACHED_WORDS:
    cache.clear()
  cache[word] = tokens
  return tokens


def _encode_for_fast_path(text, sensitive_chars):
  """UTF-8 bytes of `text`, or None when only the Python path is exact."""
  try:
    encoded = text.encode("utf-8")
  except UnicodeEncodeError:  # lone surrogates
    return None
  if sensitive_chars and not sensitive_chars.isdisjoint(text):
    return None
  return encoded


# ASCII punctuation as is_punctuation defines it (every ASCII P* character
# lies in its ranges): a mark alone, or a run of anything else.
_ASCII_PIECES = re.compile(r"[!-/:-@\[-`{-~]|[^!-/:-@\[-`{-~]+")


def _split_on_punctuation(text):
  """'ab,c' -> ['ab', ',', 'c']: each punctuation mark is its own token."""
  if text.isascii():
    return _ASCII_PIECES.findall(text)
  output = []
  start_new_word = True
  for char in text:
    if is_punctuation(char):
      output.append(char)
      start_new_word = True
    else:
      if start_new_word:
        output.append("")
      start_new_word = False
      output[-1] += char
  return output
