import unicodedata

import numpy as np
import tensorflow as tf

from bert_tf import tokenization
from bert_tf.text.char_classes import char_classes, to_regex_class

# Every BMP code point but the surrogates, plus samples of the other planes.
CHARS = [chr(code) for code in
         list(range(0xD800)) + list(range(0xE000, 0x10000))
         + list(range(0x10000, 0x110000, 97))]


def matches(regex_class):
  return tf.strings.regex_full_match(CHARS, regex_class).numpy()


def test_to_regex_class_merges_ranges():
  assert to_regex_class([0x41, 0x42, 0x43, 0x61]) == "[\\x{41}-\\x{43}\\x{61}]"


def test_classes_agree_with_the_python_definitions():
  classes = char_classes()
  expected = {
      "deleted": lambda c: c in "\x00\ufffd" or tokenization.is_control(c),
      "separators": lambda c: (c != " " and not tokenization.is_control(c)
                               and (tokenization.is_whitespace(c)
                                    or c.isspace())),
      "cjk": lambda c: tokenization.is_chinese_char(ord(c)),
      "mark": lambda c: unicodedata.category(c) == "Mn",
      "punctuation": tokenization.is_punctuation,
  }
  for name, predicate in expected.items():
    want = np.array([predicate(char) for char in CHARS])
    got = matches(classes[name])
    wrong = [hex(ord(CHARS[i])) for i in np.flatnonzero(want != got)[:10]]
    assert not wrong, f"{name} disagrees at {wrong}"
