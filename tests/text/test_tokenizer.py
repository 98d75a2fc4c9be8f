"""InGraphTokenizer gives FullTokenizer's ids, for every vocabulary and text."""

import os
import subprocess
import sys
import textwrap

import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from bert_tf import tokenization
from bert_tf.text import InGraphTokenizer, pack_inputs
from bert_tf.text.tokenizer import lower_case_differences
from tests.support.tokenization_cases import (
    VOCAB_CASES, corpus_lines, for_every_vocab_and_adversarial_texts,
    original_tokenize, vocab_path)

_TOKENIZERS = {}


def tokenizers(name, lower):
  """(exact Python tokenizer, in-graph tokenizer), built once per case."""
  if (name, lower) not in _TOKENIZERS:
    path = vocab_path(name)
    _TOKENIZERS[name, lower] = (tokenization.FullTokenizer(path, lower),
                                InGraphTokenizer(path, lower))
  return _TOKENIZERS[name, lower]


def exact_ids(tokenizer, text):
  return tokenizer.convert_tokens_to_ids(original_tokenize(tokenizer, text))


def assert_same_ids(name, lower, texts):
  exact, in_graph = tokenizers(name, lower)
  encoded = [text if isinstance(text, bytes) else text.encode("utf-8")
             for text in texts]
  got = in_graph(tf.constant(encoded, tf.string)).to_list()
  for text, ids in zip(texts, got):
    assert ids == exact_ids(exact, text), repr(text)


@pytest.mark.shared
@pytest.mark.parametrize("name, lower", VOCAB_CASES)
def test_corpus_tokenises_identically(name, lower):
  assert_same_ids(name, lower, corpus_lines())


@for_every_vocab_and_adversarial_texts(max_examples=60)
def test_adversarial_text_tokenises_identically(name, lower, texts):
  assert_same_ids(name, lower, texts)


@pytest.mark.shared
@settings(max_examples=100, deadline=None)
@given(data=st.lists(st.binary(max_size=30), min_size=1, max_size=8))
def test_invalid_utf8_bytes_are_dropped_as_the_original(data):
  assert_same_ids("bert-base-multilingual-cased-vocab.txt", True, data)


def small_vocab(tmp_path, tokens):
  path = tmp_path / "vocab.txt"
  path.write_text("".join(f"{token}\n" for token in tokens), encoding="utf-8")
  return str(path)


def test_repeated_blank_and_empty_suffix_lines_match_as_load_vocab(tmp_path):
  # "ab" is on lines 1 and 4: load_vocab keeps line 4; "##" never matches.
  path = small_vocab(tmp_path, ["[UNK]", "ab", "", "##", "ab", "##c", "c"])
  exact = tokenization.FullTokenizer(path, do_lower_case=False)
  ids = InGraphTokenizer(path, do_lower_case=False)(
      tf.constant(["abc ab c  x"])).to_list()[0]
  assert ids == exact_ids(exact, "abc ab c  x") == [4, 5, 4, 6, 0]


def test_overlong_words_become_unk(tmp_path):
  path = small_vocab(tmp_path, ["[UNK]", "a", "##a"])
  tokenizer = InGraphTokenizer(path, do_lower_case=True)
  ids = tokenizer(tf.constant(["a" * 200 + " " + "a" * 201])).to_list()[0]
  assert ids == [1] + [2] * 199 + [0]


def test_vocabulary_without_unk_is_refused(tmp_path):
  path = small_vocab(tmp_path, ["a", "b"])
  with pytest.raises(ValueError, match="has no \\[UNK\\] token"):
    InGraphTokenizer(path)


def unicode_version_difference():
  """A character Python and TensorFlow's ICU lower-case differently."""
  differences = lower_case_differences()
  if not differences:
    pytest.skip("Python's and ICU's Unicode tables agree on every character")
  char, (python_spelling, icu_spelling) = sorted(differences.items())[0]
  return char, python_spelling, icu_spelling


def test_warns_when_unicode_versions_matter_for_the_vocabulary(tmp_path,
                                                               caplog):
  char, python_spelling, icu_spelling = unicode_version_difference()
  path = small_vocab(tmp_path, ["[UNK]", python_spelling, icu_spelling])
  with caplog.at_level("WARNING"):
    tokenizer = InGraphTokenizer(path, do_lower_case=True)
  assert char in tokenizer.sensitive_chars
  assert "disagree (Unicode versions)" in caplog.text


@pytest.mark.shared
def test_unicode_version_differences_do_not_matter_for_real_vocabularies():
  unicode_version_difference()
  for name, lower in VOCAB_CASES:
    assert not tokenizers(name, lower)[1].sensitive_chars, name


def test_config_round_trip(tmp_path):
  path = small_vocab(tmp_path, ["[UNK]", "hello"])
  tokenizer = InGraphTokenizer(path, do_lower_case=False)
  clone = InGraphTokenizer.from_config(tokenizer.get_config())
  assert clone.get_config() == tokenizer.get_config()
  assert clone(tf.constant(["hello Hello"])).to_list() == [[1, 0]]


def test_saved_model_tokenises_without_bert_tf(tmp_path):
  """The vocabulary travels inside the SavedModel; serving needs no bert_tf."""
  path = small_vocab(tmp_path, ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "hello",
                                "world", "##s", ","])
  tokenizer = InGraphTokenizer(path, do_lower_case=True)
  module = tf.Module()
  module.tokenizer = tokenizer

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string)] * 2)
  def serve(text_a, text_b):
    return pack_inputs(tokenizer(text_a), 8, 2, 3, tokenizer(text_b))

  module.serve = serve
  export_dir = str(tmp_path / "export")
  tf.saved_model.save(module, export_dir)
  os.remove(path)  # the export must not read the vocabulary file
  script = textwrap.dedent(f"""
      import sys, tensorflow as tf, tensorflow_text
      assert "bert_tf" not in sys.modules
      loaded = tf.saved_model.load({export_dir!r})
      out = loaded.serve(tf.constant(["Hello, worlds"]), tf.constant(["HELLO"]))
      print(out["input_ids"].numpy().tolist(), out["segment_ids"].numpy().tolist())
      """)
  result = subprocess.run([sys.executable, "-c", script], capture_output=True,
                          text=True, timeout=300, check=False)
  assert result.returncode == 0, result.stderr
  assert result.stdout.split("\n")[-2] == (
      "[[2, 4, 7, 5, 6, 3, 4, 3]] [[0, 0, 0, 0, 0, 0, 1, 1]]")
