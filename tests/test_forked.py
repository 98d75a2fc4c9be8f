"""Large batches on every core (forks), and which path encode_batch takes."""

import subprocess
import sys

import pytest

from bert_tf import forked, tokenization
from tests.helpers import PROJECT_DIR
from tests.tokenization_cases import corpus_lines, original_tokenize

pytestmark = pytest.mark.skipif(not forked.can_fork(),
                                reason="this platform cannot fork")
VOCAB = f"{PROJECT_DIR}/vocab/demo_uncased_vocab.txt"


def varied_texts(count):
  """Texts of new and repeated words, some empty, in many chunks."""
  words = ["UNwant\u00e9d,running", "lowest", "hello", "\u4e2d\u6587", ""]
  return [" ".join(words[(index * 7 + offset) % len(words)]
                   + (str(index) if offset == 0 else "")
                   for offset in range(index % 4)) for index in range(count)]


@pytest.mark.parametrize("processes", [2, 3])
def test_forks_encode_every_text_in_order(monkeypatch, processes):
  monkeypatch.setattr(tokenization, "_PARALLEL_MIN_CHARS", 1)
  texts = varied_texts(500)
  tokenizer = tokenization.FullTokenizer(VOCAB, do_lower_case=True)
  expected = [tokenizer.convert_tokens_to_ids(
      original_tokenize(tokenizer, text)) for text in texts]
  assert tokenizer.encode_many(texts, processes=processes) == expected
  assert tokenizer.encode_many(texts, processes=1) == expected


@pytest.mark.shared
def test_forks_encode_a_real_corpus_as_one_process(monkeypatch):
  monkeypatch.setattr(tokenization, "_PARALLEL_MIN_CHARS", 1)
  texts = corpus_lines() * 3
  tokenizer = tokenization.FullTokenizer(VOCAB, do_lower_case=True)
  assert tokenizer.encode_many(texts, processes=2) == [
      tokenizer.encode(text) for text in texts]


_WHICH_PATH = """
import sys
from bert_tf import tokenization
tokenizer = tokenization.FullTokenizer(sys.argv[1])
tokenizer.encode_batch(["hello world"] * 1000)
print("tensorflow" in sys.modules, tokenizer._in_graph is not None)
import tensorflow
tokenization._COMPILE_MIN_CHARS = 100
tokenizer.encode_batch(["hello world"] * 1000)
print(tokenizer._in_graph is not None)
"""


def test_a_small_batch_needs_no_tensorflow_and_a_large_one_compiles():
  """Below the thresholds, encode_batch stays in Python (TensorFlow is not
  even imported); with TensorFlow loaded and a batch past
  _COMPILE_MIN_CHARS, it builds the compiled path."""
  result = subprocess.run(
      [sys.executable, "-c", _WHICH_PATH, VOCAB],
      capture_output=True, text=True, check=True, cwd=PROJECT_DIR)
  assert result.stdout.split() == ["False", "False", "True"]
