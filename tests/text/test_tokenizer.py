"""InGraphTokenizer gives FullTokenizer's ids, for every vocabulary and text."""

import functools
import json
import os
import subprocess
import sys
import textwrap

import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

import bert_tf
from bert_tf import tokenization
from bert_tf.checkpoints.folder_vocabulary import vocabulary_of
from bert_tf.text.packing import pack_inputs
from bert_tf.text.tokenizer import InGraphTokenizer
from bert_tf.text.tokenizer import lower_case_differences
from bert_tf.wordpiece.vocabulary import vocab_is_lower_cased
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


# transformers' own ids and outputs on the committed fixture folders
# (tests/fixtures/huggingface/make_transformers_tokenization.py).
TRANSFORMERS_REFERENCE = os.path.join(
    os.path.dirname(os.path.dirname(__file__)), "fixtures", "huggingface",
    "transformers_tokenization.json")


@functools.cache
def transformers_reference():
  with open(TRANSFORMERS_REFERENCE, encoding="utf-8") as reader:
    return json.load(reader)


def folder_preprocessor(folder, tokenization_rules, max_seq_length):
  """A BertPreprocessor of a fixture folder's vocabulary and casing."""
  vocabulary, files = vocabulary_of(
      os.path.join(os.path.dirname(TRANSFORMERS_REFERENCE), "..", folder))
  lower = files.do_lower_case
  if lower is None:
    lower = vocab_is_lower_cased(vocabulary)
  return bert_tf.BertPreprocessor(vocabulary, lower, max_seq_length,
                                  tokenization_rules=tokenization_rules)


@pytest.mark.parametrize("folder", sorted(
    transformers_reference()["tokenizers"]))
def test_transformers_rules_give_transformers_ids(folder):
  """Special tokens in text kept whole (at either end, inside words, next
  to each other; not in lower case, nor broken by a deleted character),
  words over 100 characters [UNK] (ASCII and multi-byte), and pairs of
  every length relation truncated and packed as transformers: for
  tokenizer.json folders (uncased, cased, with added_tokens_decoder) and a
  vocab.txt one."""
  reference = transformers_reference()
  expected = reference["tokenizers"][folder]
  tokenizer = folder_preprocessor(folder, "transformers", 8).tokenizer
  cls, sep = tokenizer.vocab["[CLS]"], tokenizer.vocab["[SEP]"]
  ids = tokenizer.tokenize_ids(reference["texts"]).to_list()
  for text, ours, theirs in zip(reference["texts"], ids, expected["single"]):
    assert [cls] + ours + [sep] == theirs, repr(text)
  length = reference["pair_length"]
  packed = folder_preprocessor(folder, "transformers", length)(
      tuple(map(list, zip(*reference["pairs"]))))
  for row, (input_ids, type_ids) in enumerate(zip(
      expected["pair_input_ids"], expected["pair_token_type_ids"])):
    padding = [0] * (length - len(input_ids))
    assert packed["input_ids"][row].numpy().tolist() == input_ids + padding
    assert packed["segment_ids"][row].numpy().tolist() == type_ids + padding
    assert packed["input_mask"][row].numpy().sum() == len(input_ids)


@pytest.mark.shared
def test_a_final_sigma_lower_cases_as_the_original_under_either_rules():
  """The one difference from transformers that stays (docs/tokenization.md):
  an upper-case Greek word's final Σ lower-cases to ς, as Python and the
  original do; transformers' σ makes both words [UNK] in this vocabulary."""
  path = vocab_path("bert-base-uncased-vocab.txt")
  exact = tokenization.FullTokenizer(path, True)
  text = "ΟΔΟΣ ΣΑΣ"
  assert exact.tokenize(text) == ["ο", "##δ", "##ος", "σ", "##α", "##ς"]
  ids = InGraphTokenizer(path, True, "transformers").tokenize_ids([text])
  assert ids.to_list() == [exact_ids(exact, text)]


def test_the_original_s_rules_stay_the_original_s():
  """On the same texts, the original's rules give FullTokenizer's ids:
  "[MASK]" in pieces, words of up to 200 characters split."""
  reference = transformers_reference()
  folder = "sentence_transformers/today_mean"
  tokenizer = folder_preprocessor(folder, "original", 8).tokenizer
  exact = tokenization.FullTokenizer(tokenizer.vocabulary, True)
  texts = reference["texts"]
  assert tokenizer.tokenize_ids(texts).to_list() == [
      exact_ids(exact, text) for text in texts]
  assert texts[0] == "[MASK] starts it"
  assert tokenizer.tokenize_ids(texts[:1]).to_list()[0] != \
      reference["tokenizers"][folder]["single"][0][1:-1]


def test_special_tokens_of_a_vocab_txt_are_kept_whole_where_it_has_them(
    tmp_path):
  """[PAD] [UNK] [CLS] [SEP] [MASK] as the vocabulary has them: one it
  lacks is text; a bracketed token that is not special ([unused0]) too."""
  path = small_vocab(tmp_path, ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[",
                                "]", "mask", "unused", "##0", "a"])
  ids = InGraphTokenizer(path, True, "transformers")(
      tf.constant(["a[MASK][SEP] [unused0]\x00[PAD]"])).to_list()[0]
  assert ids == [9, 4, 6, 5, 3, 4, 7, 8, 5, 0]


@pytest.mark.parametrize("rules", ["Transformers", None, 2])
def test_unknown_tokenization_rules_are_refused(tmp_path, rules):
  path = small_vocab(tmp_path, ["[UNK]"])
  with pytest.raises(ValueError, match=r"^tokenization_rules=.*: expected "
                     r"one of 'original', 'transformers'$"):
    InGraphTokenizer(path, True, rules)


def test_a_piece_longer_than_any_word_is_never_matched(tmp_path):
  """A vocabulary line of 300 characters (over TensorFlow Text's 256
  bytes) can match no word of up to 200; one it could match but cannot
  hold is refused by name, not by TensorFlow's RuntimeError."""
  path = small_vocab(tmp_path, ["[UNK]", "a" * 300, "##a", "a"])
  exact = tokenization.FullTokenizer(path, True)
  ids = InGraphTokenizer(path, True)(tf.constant(["a" * 150])).to_list()
  assert ids == [exact.encode("a" * 150)] == [[3] + [2] * 149]
  path = small_vocab(tmp_path, ["[UNK]", "\U0001f600" * 100])
  with pytest.raises(ValueError, match=r"vocab.txt: token 1 \('😀+'\.\.\.\) "
                     r"has 400 bytes; the in-graph tokenizer"):
    InGraphTokenizer(path, True)
