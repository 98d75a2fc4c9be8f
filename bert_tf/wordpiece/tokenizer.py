"""The original BERT tokenizer's classes and functions, with identical output
(bert_tf.tokenization is the original module's face over them).

Text -> BasicTokenizer (clean, split CJK, whitespace, lower-case and strip
accents, split punctuation) -> WordpieceTokenizer (greedy longest match
against vocab.txt). The character classes (wordpiece.rules, shared with
the in-graph tokenizer) are the original's exact definitions, which differ
from Python's and from Unicode's usual ones in ways that change tokens (e.g.
"$" and "^" are punctuation here, Zl/Zp split words only through str.split).
"""

import itertools
import re
import unicodedata

from bert_tf import parallel
from bert_tf.wordpiece import fast_paths
from bert_tf.wordpiece.rules import (MAX_INPUT_CHARS_PER_WORD, UNK_TOKEN,
                                     check_stated_casing, cleaned_char,
                                     convert_to_unicode, read_vocabulary,
                                     strip_accents)

# encode_many shares a batch of this many characters or more among
# processes: below, forking and returning the ids cost more than they save.
_PARALLEL_MIN_CHARS = 1 << 20
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
    return whitespace_tokenize(" ".join(fast_paths.split_on_punctuation(word)))


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
    # "##" pieces by what follows the "##", looked up without building
    # "##" + text for every candidate.
    self._continuations = {token[2:]: token for token in vocab
                           if token.startswith("##") and len(token) > 2}
    # The longest piece that can match at a word's start and after it: the
    # search for the longest match starts there, not at the word's end.
    self._longest_first = max(map(len, vocab), default=0)
    self._longest_continuation = max(map(len, self._continuations),
                                     default=0)

  def tokenize(self, text):
    output_tokens = []
    for word in whitespace_tokenize(convert_to_unicode(text)):
      output_tokens.extend(self.word_pieces(word))
    return output_tokens

  def word_pieces(self, word):
    """The pieces of one whitespace-free word: greedy longest match."""
    length = len(word)
    if length > self.max_input_chars_per_word:
      return [self.unk_token]
    if word in self.vocab:  # the common case: the word is one piece
      return [word]
    end = min(length, self._longest_first)
    while end and word[:end] not in self.vocab:
      end -= 1
    if not end:
      return [self.unk_token]
    pieces = [word[:end]]
    continuations = self._continuations
    while end < length:
      start = end
      end = min(length, start + self._longest_continuation)
      while end > start and word[start:end] not in continuations:
        end -= 1
      if end == start:
        return [self.unk_token]
      pieces.append(continuations[word[start:end]])
    return pieces


class FullTokenizer:
  """BasicTokenizer then WordpieceTokenizer, over a vocab.txt (or a
  tokenizer.json, whose word length limit and casing it follows: a
  do_lower_case that contradicts its normalizer is refused).

  `tokenize` and `encode` compute the original's result in pure Python,
  remembering the result of each whitespace-separated word (after cleaning,
  every word is tokenised independently of the rest of the text, so a
  repeated word costs a lookup) and doing each per-character step as one
  str.translate. `encode_many` does so for many texts, on every core for a
  large batch (bert_tf.text.batch_encoding adds the in-graph tokenizer's
  compiled path for very large ones). All give identical results.

  Example:
    >>> tokenizer = FullTokenizer("vocab.txt", do_lower_case=True)
    >>> tokenizer.tokenize("UNwant\\u00E9d,running")
    ['un', '##want', '##ed', ',', 'runn', '##ing']
    >>> tokenizer.encode_many(["UNwant\\u00E9d,running", "hello"])
    [[7, 4, 5, 10, 8, 9], [13]]
  """

  def __init__(self, vocab_file, do_lower_case=True):
    """vocab_file: a path, or the rules.Vocabulary a run read it as."""
    vocabulary = read_vocabulary(vocab_file)
    check_stated_casing(vocabulary, do_lower_case)
    self.vocabulary = vocabulary
    self.vocab_file = vocabulary.path
    self.do_lower_case = do_lower_case
    self.vocab = vocabulary.vocab
    self.inv_vocab = {index: token for token, index in self.vocab.items()}
    self.basic_tokenizer = BasicTokenizer(do_lower_case=do_lower_case)
    self.wordpiece_tokenizer = WordpieceTokenizer(
        vocab=self.vocab,
        max_input_chars_per_word=vocabulary.max_input_chars_per_word)
    self._chars = fast_paths.CharacterTables()
    # Cleaned word -> its basic tokens, its pieces, their ids; a basic token
    # -> its pieces (many words share tokens: "word," and "word").
    self._word_tokens = {}
    self._word_pieces = {}
    self._word_ids = {}
    self._token_pieces = {}

  def tokenize(self, text):
    return self._per_word([text], self._word_pieces, self._pieces_of)[0]

  def basic_tokenize(self, text):
    """basic_tokenizer.tokenize(text), as fast as tokenize (SQuAD aligns
    its answers with it, as the original's get_final_text)."""
    return self._per_word([text], self._word_tokens, self._basic_tokens)[0]

  def encode(self, text):
    """convert_tokens_to_ids(tokenize(text))."""
    return self._per_word([text], self._word_ids, self._ids_of)[0]

  def encode_many(self, texts, processes=None):
    """[encode(text) for text in texts], in pure Python (no TensorFlow).

    A batch of _PARALLEL_MIN_CHARS characters or more is shared among
    `processes` processes (default: one per core) where this process can be
    forked (parallel.can_fork: not once TensorFlow is loaded): forks of it
    (parallel.apply), whose words learned come back to this
    process's word cache: a later batch, and the forks it starts, find
    them.
    """
    texts = list(texts)  # _per_word converts each to str
    return parallel.apply(
        lambda chunk: self._per_word(chunk, self._word_ids, self._ids_of),
        texts, processes,
        worth_forking=sum(map(len, texts)) >= _PARALLEL_MIN_CHARS,
        cache=self._word_ids)

  def _per_word(self, texts, cache, tokenize_word):
    """For each text, tokenize_word of each of its cleaned words,
    concatenated; each word's result remembered in cache. One loop for a
    whole batch: per text, it costs little more than the split."""
    cleaned = self._chars.cleaned
    remembered = cache.get
    chain = itertools.chain.from_iterable
    results = []
    for text in texts:
      words = cleaned(convert_to_unicode(text)).split()
      # Looked up and joined in C (map, chain): a text of known words never
      # runs a Python loop over its words; a word not seen yet is None,
      # which chain cannot iterate.
      try:
        results.append(list(chain(map(remembered, words))))
      except TypeError:
        results.append(list(chain(
            fast_paths.remember(cache, word, tokenize_word(word))
            if tokens is None else tokens
            for word, tokens in zip(words, map(remembered, words)))))
    return results

  def _basic_tokens(self, word):
    """BasicTokenizer.tokenize_word of a cleaned word: its per-character
    steps as str.translate tables (fast_paths.CharacterTables)."""
    if self.do_lower_case:
      word = word.lower()
      if not word.isascii():
        word = self._chars.without_marks(unicodedata.normalize("NFD", word))
    return self._chars.split_punctuation(word)

  def _pieces_of(self, word):
    """The WordPiece pieces of a cleaned word's basic tokens."""
    pieces = []
    for token in self._basic_tokens(word):
      token_pieces = self._token_pieces.get(token)
      if token_pieces is None:
        token_pieces = fast_paths.remember(self._token_pieces, token,
                                 self.wordpiece_tokenizer.word_pieces(token))
      pieces += token_pieces
    return pieces

  def _ids_of(self, word):
    """The ids of a cleaned word's pieces."""
    return self.convert_tokens_to_ids(self._pieces_of(word))

  def convert_tokens_to_ids(self, tokens):
    return convert_by_vocab(self.vocab, tokens)

  def convert_ids_to_tokens(self, ids):
    return convert_by_vocab(self.inv_vocab, ids)
