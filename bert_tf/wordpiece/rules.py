"""The rules of the original tokenizer that both tokenizers follow.

The pure-Python tokenizer (wordpiece.tokenizer) and the in-graph one
(bert_tf.text) must classify and clean every character alike and read
vocabularies (vocab.txt or a tokenizer.json) alike; both import these
definitions from here, so neither imports the other's module to learn them.
No TensorFlow here.
"""

import dataclasses
import hashlib
import os
import re
import unicodedata

from bert_tf.files import input_checks, json_files, storage
from bert_tf.wordpiece import tokenizer_json

PAD_TOKEN = "[PAD]"
UNK_TOKEN = "[UNK]"
CLS_TOKEN = "[CLS]"
SEP_TOKEN = "[SEP]"
MASK_TOKEN = "[MASK]"
# After [PAD] and the [unused*] tokens, in this order, in every release.
SPECIAL_TOKENS = (UNK_TOKEN, CLS_TOKEN, SEP_TOKEN, MASK_TOKEN)
# What every program looks up: [UNK] for words the vocabulary lacks, [CLS]
# and [SEP] to pack every sequence (pretraining data needs [MASK] too).
REQUIRED_TOKENS = (UNK_TOKEN, CLS_TOKEN, SEP_TOKEN)
MAX_INPUT_CHARS_PER_WORD = 200
# Whose tokenizer a model was trained with, whose rules it tokenises and
# packs by: the original's (FullTokenizer), or transformers' (BertTokenizer:
# special tokens in text kept whole, words of up to 100 characters, pairs
# truncated and packed as bert_tf.text.packing says).
ORIGINAL_RULES, TRANSFORMERS_RULES = "original", "transformers"
TOKENIZATION_RULES = (ORIGINAL_RULES, TRANSFORMERS_RULES)
# transformers' word limit, whatever a tokenizer.json says (BertTokenizer
# builds its WordPiece from the vocabulary alone).
TRANSFORMERS_MAX_INPUT_CHARS_PER_WORD = 100
# Special tokens ([CLS], [unused12], <S>): reserved, not pieces of words.
BRACKETED_TOKEN = re.compile(r"\[[^\]]+\]|<[^>]+>")

# The CJK Unified Ideograph blocks the original splits per character.
# Hangul, Hiragana and Katakana are deliberately not in it.
CJK_RANGES = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF),
              (0x2A700, 0x2B73F), (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF),
              (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


def convert_to_unicode(text):
  """str as is; bytes decoded as UTF-8, dropping invalid bytes as the original."""
  if isinstance(text, str):
    return text
  if isinstance(text, bytes):
    return text.decode("utf-8", "ignore")
  raise ValueError(f"Unsupported string type: {type(text)}")


@dataclasses.dataclass(frozen=True)
class Vocabulary:
  """A vocabulary file, vocab.txt or a tokenizer.json, read once: a run
  passes this value on (to its tokenizers, its checks, the copy in its
  output directory) instead of its path, so the file is read one time.

  Attributes:
    path: the file.
    data: its bytes.
    vocab: {token: id}.
    max_input_chars_per_word: longer words become [UNK].
    lower_case: whether a tokenizer.json's normalizer lower-cases; None
      for a vocab.txt, which does not say.
    added_tokens: a tokenizer.json's special added tokens; () for a
      vocab.txt.
  """
  path: str
  data: bytes = dataclasses.field(repr=False)
  vocab: dict = dataclasses.field(repr=False)
  max_input_chars_per_word: int = MAX_INPUT_CHARS_PER_WORD
  lower_case: object = None
  added_tokens: tuple = ()

  @property
  def is_tokenizer_json(self):
    return tokenizer_json.is_tokenizer_json(self.path)

  @property
  def special_tokens(self):
    """The tokens transformers keeps whole where they appear in text:
    [PAD], [UNK], [CLS], [SEP] and [MASK] where the vocabulary has them,
    and a tokenizer.json's added tokens."""
    named = [token for token in (PAD_TOKEN,) + SPECIAL_TOKENS
             if token in self.vocab]
    return tuple(dict.fromkeys(named + list(self.added_tokens)))

  @property
  def md5(self):
    """Hex md5 of the file's bytes (an official vocabulary's identity)."""
    return hashlib.md5(self.data).hexdigest()


def read_vocabulary(vocab_file):
  """The Vocabulary of vocab.txt or a tokenizer.json (by name: *.json);
  a Vocabulary given is returned as it is, unread."""
  if isinstance(vocab_file, Vocabulary):
    return vocab_file
  path = os.fspath(vocab_file)
  with storage.open_file(path, "rb") as reader:
    data = reader.read()
  if not tokenizer_json.is_tokenizer_json(path):
    return Vocabulary(path, data, _vocab_txt_tokens(data))
  return tokenizer_json_vocabulary(
      path, data, tokenizer_json.tokenizer_settings(
          json_files.parse_json_object(input_checks.decode_utf8(data, path),
                                       path), path))


def tokenizer_json_vocabulary(path, data, settings):
  """The Vocabulary of a tokenizer.json read already: its bytes and its
  tokenizer_json.TokenizerJson."""
  return Vocabulary(path, data, settings.vocab,
                    settings.max_input_chars_per_word, settings.lower_case,
                    settings.added_tokens)


def check_tokenization_rules(tokenization_rules):
  """Raises ValueError unless tokenization_rules is one of
  TOKENIZATION_RULES."""
  if tokenization_rules not in TOKENIZATION_RULES:
    raise ValueError(f"tokenization_rules={tokenization_rules!r}: expected "
                     f"one of {', '.join(map(repr, TOKENIZATION_RULES))}")


def load_vocab(vocab_file):
  """{token: id} of vocab.txt or a tokenizer.json (see read_vocabulary)."""
  return read_vocabulary(vocab_file).vocab


def _vocab_txt_tokens(data):
  """{token: id} from vocab.txt's bytes, one token per line, id = line
  number (a repeated token keeps its last line's). Lines end at b"\\n"
  alone; each is decoded dropping invalid bytes, then stripped. Decoded and
  split as one text: the same tokens as line by line (no invalid sequence
  can take in a b"\\n"), faster (31 ms against 44 for the multilingual
  vocabulary)."""
  lines = convert_to_unicode(data).split("\n")
  if not data or data.endswith(b"\n"):  # no line after the last b"\n"
    lines.pop()
  return dict(zip(map(str.strip, lines), range(len(lines))))


def check_stated_casing(vocabulary, do_lower_case):
  """Raises ValueError, naming the file, where `vocabulary` is a
  tokenizer.json whose normalizer says other casing than do_lower_case:
  its words would not match its pieces."""
  said = vocabulary.lower_case
  if said is not None and said != bool(do_lower_case):
    raise ValueError(
        f"{vocabulary.path}: normalizer.lowercase is {said}, but "
        f"do_lower_case={bool(do_lower_case)}; pass do_lower_case={said}")


def check_special_tokens(vocab, vocab_file, tokens=REQUIRED_TOKENS):
  """Raises ValueError, naming vocab_file, where `vocab` ({token: id}, as
  load_vocab reads it) lacks any of `tokens`: checked where a program reads
  its vocabulary, not where the tokenizer first looks one up."""
  needed = f"a BERT vocabulary has {', '.join(tokens)}"
  if not vocab:
    raise ValueError(f"{vocab_file}: no tokens; {needed}")
  missing = [token for token in tokens if token not in vocab]
  if missing:
    raise ValueError(f"{vocab_file}: no {', '.join(missing)} token; {needed}")


def is_whitespace(char):
  """Space, \\t, \\n, \\r and Unicode Zs."""
  return char in " \t\n\r" or unicodedata.category(char) == "Zs"


def is_control(char):
  """Unicode Cc and Cf, except \\t, \\n and \\r (which are whitespace)."""
  if char in "\t\n\r":
    return False
  return unicodedata.category(char) in ("Cc", "Cf")


def is_punctuation(char):
  """Every ASCII non-alphanumeric symbol and every Unicode P* character."""
  code = ord(char)
  if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or (
      123 <= code <= 126):
    return True
  return unicodedata.category(char).startswith("P")


def is_chinese_char(code):
  """Whether code point `code` is a CJK Unified Ideograph."""
  return any(low <= code <= high for low, high in CJK_RANGES)


def cleaned_char(char):
  """What the original's _clean_text then _tokenize_chinese_chars make of a
  character (both act on one character at a time): U+0000, U+FFFD and
  control characters are dropped, whitespace becomes " ", CJK ideographs get
  spaces around them."""
  if char in "\x00\ufffd" or is_control(char):
    return ""
  if is_whitespace(char):
    return " "
  if is_chinese_char(ord(char)):
    return f" {char} "
  return char


def strip_accents(text):
  """NFD, then every Mn (non-spacing mark) dropped."""
  if text.isascii():  # NFD leaves ASCII as it is, with no marks
    return text
  return "".join(char for char in unicodedata.normalize("NFD", text)
                 if unicodedata.category(char) != "Mn")


def code_point_ranges(codes):
  """Sorted code points as [(first, last)] runs of consecutive ones, for
  writing a character class in a regex."""
  ranges = []
  for code in codes:
    if ranges and ranges[-1][1] == code - 1:
      ranges[-1][1] = code
    else:
      ranges.append([code, code])
  return [tuple(run) for run in ranges]
