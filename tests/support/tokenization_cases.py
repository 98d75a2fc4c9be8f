"""Shared inputs for the tokenizer tests: real vocabularies and hard texts."""

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.helpers import SHARED_DIR

REAL_VOCABS = ("bert-base-uncased-vocab.txt", "bert-base-cased-vocab.txt",
               "chinese_L-12_H-768_A-12-vocab.txt",
               "bert-base-multilingual-cased-vocab.txt")
# Every real vocabulary with both do_lower_case values.
VOCAB_CASES = [(name, lower) for name in REAL_VOCABS for lower in (True, False)]
CORPUS = os.path.join(SHARED_DIR, "reference", "create_pretraining_data",
                      "corpus.txt")


def vocab_path(name):
  return os.path.join(SHARED_DIR, "vocab", name)


def corpus_lines():
  with open(CORPUS, encoding="utf-8") as reader:
    return reader.read().splitlines()


# Texts that trip tokenizers: accents and combining marks, CJK, Hangul and
# Kana, control and format characters, odd whitespace, emoji, private use,
# Greek sigma, dotted I, unassigned code points, long words, mixed scripts.
_SPECIAL_CHARS = (
    "\x00\x01\x07\x0b\x0c\x1c\x1f\x7f\x85\x9f\t\n\r \u00a0\u1680\u2000\u2009"
    "\u200a\u200b\u200c\u200d\u200e\u2028\u2029\u202f\u205f\u3000\ufeff\u00ad"
    "\ufffd\ufffe\u0300\u0301\u0308\u0327\u034f\u0645\u064b\u0915\u093f\u0e01"
    "\u0e31\u00e9\u00c9\u00df\u0130\u0131\u03a3\u03c3\u03c2\u0391\u1e9e\u212a"
    "\u4e2d\u6587\uf900\uff21\uff41\u3042\u30a2\uac00\u1100\u2f00\u3400"
    "\U00020000\U0002f800\U0001f600\U0001f44d\U0001f3fb\ue000\U000f0000"
    "\u0378\u2c2f\U00010570\U000105c9\u00bf\u00a1\u2014\u201c\u055d\u1fef"
    "#$^`~|\\")
_ALPHABET = st.one_of(
    st.sampled_from(_SPECIAL_CHARS),
    st.characters(codec="utf-8"),
    st.characters(min_codepoint=0x20, max_codepoint=0x7e))


def _long_word():
  return st.text(st.sampled_from("ab\u00e9\u4e2dX"), min_size=195,
                 max_size=205)


ADVERSARIAL_TEXTS = st.lists(
    st.one_of(st.text(_ALPHABET, max_size=40), _long_word()),
    min_size=1, max_size=8)


def for_every_vocab_and_adversarial_texts(max_examples):
  """Runs a test(name, lower, texts) for every VOCAB_CASE on generated texts."""
  def decorate(test):
    test = given(texts=ADVERSARIAL_TEXTS)(test)
    test = settings(max_examples=max_examples, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])(test)
    test = pytest.mark.parametrize("name, lower", VOCAB_CASES)(test)
    return pytest.mark.shared(test)
  return decorate


def original_tokenize(tokenizer, text):
  """The original FullTokenizer.tokenize: BasicTokenizer, then WordPiece."""
  return [piece for word in tokenizer.basic_tokenizer.tokenize(text)
          for piece in tokenizer.wordpiece_tokenizer.tokenize(word)]
