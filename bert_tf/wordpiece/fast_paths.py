"""The pure-Python tokenizer's fast steps: the same results as the
original's per-character loops, each step one pass in C (str.translate,
re) over a string, and a word cache kept within bounds."""

import re
import unicodedata

from bert_tf.wordpiece.rules import (cleaned_char, code_point_ranges,
                                     is_punctuation)

# Words FullTokenizer remembers the pieces of before it starts afresh.
_MAX_CACHED_WORDS = 1 << 20


def remember(cache, word, tokens):
  """cache[word] = tokens, starting afresh when the cache is full."""
  if len(cache) >= _MAX_CACHED_WORDS:
    cache.clear()
  cache[word] = tokens
  return tokens


def encode_for_fast_path(text, sensitive_chars):
  """UTF-8 bytes of `text`, or None when only the Python path is exact."""
  try:
    encoded = text.encode("utf-8")
  except UnicodeEncodeError:  # lone surrogates
    return None
  if sensitive_chars and not sensitive_chars.isdisjoint(text):
    return None
  return encoded


class CharacterTables:
  """str.translate tables of what the original does to single characters,
  each character classified by the original's rules the first time it is
  seen: cleaning (cleaned_char, before words are split), dropping accent
  marks (Mn, after NFD) and splitting punctuation off (is_punctuation).
  Each step is then one pass in C over a string instead of a Python loop
  over its characters.
  """

  def __init__(self):
    self._cleaning = {}
    self._marks = {}
    self._punctuation = {}
    self._seen = set()
    self._punctuation_re = None
    self._learn(map(chr, range(128)))
    self._compile_unchanged()

  def cleaned(self, text):
    """The original's _clean_text then _tokenize_chinese_chars."""
    if self._changed.search(text) is None:
      return text  # the common case, found by one regex scan in C
    self._learn_text(text)
    cleaned = text.translate(self._cleaning)
    if cleaned == text:  # only new characters made it take this path
      self._rescans += 1
      if self._rescans > _RESCANS_BEFORE_RECOMPILING:
        self._compile_unchanged()
    return cleaned

  def _compile_unchanged(self):
    """A regex of any character that cleaning changes or that has not been
    seen yet: text without one is its own cleaned text. Compiled again
    once a number of texts took the slow path for new characters alone
    (compiling per new character would cost more than it saves). Texts
    that cleaning changes (Chinese, say) do not count: they take the slow
    path anyway, and recompiling every 256 of them cost 0.3 s on 28 MB of
    26 languages."""
    unchanged = sorted(ord(char) for char in self._seen
                       if ord(char) not in self._cleaning)
    self._changed = _regex_class(unchanged, negated=True)
    self._rescans = 0

  def without_marks(self, text):
    """text without its Mn characters (strip_accents after NFD)."""
    self._learn_text(text)
    return text.translate(self._marks)

  def split_punctuation(self, word):
    """BasicTokenizer's punctuation split of a whitespace-free word (its
    characters already seen; lower-casing and NFD make no whitespace of
    any character, so a word split from cleaned text stays free of it)."""
    if self._punctuation_re.search(word) is None:
      return [word] if word else []
    return word.translate(self._punctuation).split()

  def _learn_text(self, text):
    if not text.isascii():
      unseen = set(text) - self._seen
      if unseen:
        self._learn(unseen)

  def _learn(self, chars):
    for char in chars:
      cleaned = cleaned_char(char)
      if cleaned != char:
        self._cleaning[ord(char)] = cleaned
      if unicodedata.category(char) == "Mn":
        self._marks[ord(char)] = None
      if is_punctuation(char):
        self._punctuation[ord(char)] = f" {char} "
        self._punctuation_re = None
      self._seen.add(char)
    if self._punctuation_re is None:  # few characters are punctuation
      self._punctuation_re = _regex_class(sorted(self._punctuation))


# Texts CharacterTables cleans the slow way before it compiles its regex
# of characters cleaning leaves as they are again.
_RESCANS_BEFORE_RECOMPILING = 256


def _regex_class(codes, negated=False):
  """A compiled regex of one character of the sorted code points (of any
  other character when negated)."""
  return re.compile(("[^" if negated else "[") + "".join(
      f"\\U{low:08x}-\\U{high:08x}" for low, high in code_point_ranges(codes))
                    + "]")


# ASCII punctuation as is_punctuation defines it (every ASCII P* character
# lies in its ranges): a mark alone, or a run of anything else.
_ASCII_PIECES = re.compile(r"[!-/:-@\[-`{-~]|[^!-/:-@\[-`{-~]+")


def split_on_punctuation(text):
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
