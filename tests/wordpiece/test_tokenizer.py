"""The original tokenizer's behaviours, case by case."""

import functools
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bert_tf import tokenization
from bert_tf.text import batch_encoding
from bert_tf.wordpiece import fast_paths
from bert_tf.text.tokenizer import lower_case_differences
from tests.support.tokenization_cases import (
    VOCAB_CASES, corpus_lines, for_every_vocab_and_adversarial_texts,
    original_tokenize, vocab_path)

VOCAB = ["[UNK]", "[CLS]", "[SEP]", "want", "##want", "##ed", "wa", "un",
         "runn", "##ing", ",", "low", "lowest", "hello", "ab", "##c"]


@pytest.fixture()
def vocab_file(tmp_path):
  path = tmp_path / "vocab.txt"
  path.write_text("".join(f"{token}\n" for token in VOCAB), encoding="utf-8")
  return str(path)


def test_full_tokenizer_and_ids(vocab_file):
  tokenizer = tokenization.FullTokenizer(vocab_file, do_lower_case=True)
  tokens = tokenizer.tokenize("UNwant\u00E9d,running")
  assert tokens == ["un", "##want", "##ed", ",", "runn", "##ing"]
  assert tokenizer.convert_tokens_to_ids(tokens) == [7, 4, 5, 10, 8, 9]
  assert tokenizer.convert_ids_to_tokens([13, 0]) == ["hello", "[UNK]"]


def test_lower_case_strips_accents_and_splits_punctuation():
  basic = tokenization.BasicTokenizer(do_lower_case=True)
  assert basic.tokenize(" \tHeLLo!how  \n Are yoU?  ") == [
      "hello", "!", "how", "are", "you", "?"]
  assert basic.tokenize("H\u00E9llo") == ["hello"]


def test_cased_keeps_case_and_accents():
  basic = tokenization.BasicTokenizer(do_lower_case=False)
  assert basic.tokenize(" \tHeLLo!how  \n Are yoU?  ") == [
      "HeLLo", "!", "how", "Are", "yoU", "?"]
  assert basic.tokenize("H\u00E9llo") == ["H\u00E9llo"]


def test_cjk_ideographs_split_but_not_hangul_or_kana():
  basic = tokenization.BasicTokenizer()
  assert basic.tokenize("ah\u535A\u63A8zz") == ["ah", "\u535A", "\u63A8", "zz"]
  cased = tokenization.BasicTokenizer(do_lower_case=False)
  assert cased.tokenize("\uD55C\uAD6D\u3072\u3089") == [
      "\uD55C\uAD6D\u3072\u3089"]


def test_cleaning_drops_nul_replacement_and_control_characters():
  basic = tokenization.BasicTokenizer(do_lower_case=False)
  # U+0000, U+FFFD, U+0007 (Cc) and U+200B (Cf) are deleted, joining words
  assert basic.tokenize("a\x00b\ufffdc\x07d\u200be") == ["abcde"]
  # \t \n \r and Zs (no-break space, ideographic space) separate words
  assert basic.tokenize("a\tb\nc\rd\u00A0e\u3000f") == list("abcdef")


def test_character_classes():
  for char in " \t\r\n\u00A0":
    assert tokenization.is_whitespace(char)
  assert not tokenization.is_whitespace("A")
  assert tokenization.is_control("\u0005")
  assert not tokenization.is_control("\t") and not tokenization.is_control(" ")
  for char in "-$`.\u00BF":
    assert tokenization.is_punctuation(char)
  assert not tokenization.is_punctuation("A")
  assert not tokenization.is_punctuation(" ")


def test_the_originals_private_helpers_are_there():
  """Third-party code and the original's own tokenization_test.py call the
  original module's _is_whitespace, _is_control and _is_punctuation (that
  test file, fetched and run against bert_tf.tokenization, passes)."""
  for name in ("whitespace", "control", "punctuation"):
    private = getattr(tokenization, f"_is_{name}")
    public = getattr(tokenization, f"is_{name}")
    assert [private(chr(code)) for code in range(0x3000)] == \
        [public(chr(code)) for code in range(0x3000)]
  assert tokenization._is_whitespace(" ") and tokenization._is_control("\x05")
  assert tokenization._is_punctuation("$")


def test_wordpiece_unknown_and_overlong_words():
  vocab = {token: index for index, token in enumerate(VOCAB)}
  wordpiece = tokenization.WordpieceTokenizer(vocab=vocab)
  assert wordpiece.tokenize("") == []
  assert wordpiece.tokenize("unwanted running") == [
      "un", "##want", "##ed", "runn", "##ing"]
  assert wordpiece.tokenize("unwantedX running") == ["[UNK]", "runn", "##ing"]
  assert wordpiece.tokenize("ab" + "c" * 199) == ["[UNK]"]  # 201 characters


def greedy_longest_match(vocab, word, max_chars):
  """WordPiece as the original states it: at each position, try the rest
  of the word and shorter texts ("##"-marked after the first piece) until
  one is in the vocabulary; a word with a position where none is, or
  longer than max_chars, is one [UNK]."""
  if len(word) > max_chars:
    return ["[UNK]"]
  pieces, start = [], 0
  while start < len(word):
    for end in range(len(word), start, -1):
      piece = ("##" if start else "") + word[start:end]
      if piece in vocab:
        break
    else:
      return ["[UNK]"]
    pieces.append(piece)
    start = end
  return pieces


_PIECE = st.builds(lambda marked, text: "##" * marked + text, st.booleans(),
                   st.text("ab", min_size=1, max_size=4))


@settings(max_examples=300, deadline=None)
@given(tokens=st.sets(st.one_of(_PIECE, st.text("ab#", min_size=1)),
                      max_size=30),
       words=st.lists(st.text("ab#c", min_size=1, max_size=12), max_size=10))
def test_wordpiece_is_the_greedy_longest_match(tokens, words):
  # Two letters make many texts prefixes of pieces but no piece themselves.
  vocab = {token: index for index, token in enumerate(["[UNK]", *tokens])}
  wordpiece = tokenization.WordpieceTokenizer(vocab=vocab,
                                              max_input_chars_per_word=10)
  for word in words:
    assert wordpiece.word_pieces(word) == greedy_longest_match(
        vocab, word, 10), word


def test_invalid_utf8_bytes_are_dropped():
  assert tokenization.convert_to_unicode(b"ab\xffcd") == "abcd"
  with pytest.raises(ValueError, match="Unsupported string type"):
    tokenization.convert_to_unicode(3)


def test_load_vocab_numbers_lines_and_strips(tmp_path):
  path = tmp_path / "vocab.txt"
  path.write_bytes(b"[PAD]\r\n  a \n\xc3\xa9\n")
  assert tokenization.load_vocab(str(path)) == {"[PAD]": 0, "a": 1, "\u00e9": 2}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=6), st.sampled_from(
    [b"\n", b"\r\n", b"\xc3", b"\xc3\xa9", b"\xe2\x80", b" \x1c", b"a"])),
                max_size=30))
def test_load_vocab_reads_each_line_as_the_original(tmp_path_factory, parts):
  data = b"".join(parts)
  path = tmp_path_factory.mktemp("vocab") / "vocab.txt"
  path.write_bytes(data)
  # Line by line, as the original reads it: each b"\n"-ended line decoded,
  # stripped and numbered.
  expected = {}
  for index, line in enumerate(io.BytesIO(data)):
    expected[line.decode("utf-8", "ignore").strip()] = index
  assert list(tokenization.load_vocab(str(path)).items()) == list(
      expected.items())


@pytest.mark.parametrize("lower, checkpoint, message", [
    (False, "gs://b/uncased_L-12_H-768_A-12/bert_model.ckpt", "lowercased"),
    (True, "/m/cased_L-12_H-768_A-12/bert_model.ckpt", "cased model"),
])
def test_case_mismatch_with_a_released_checkpoint(lower, checkpoint, message):
  with pytest.raises(ValueError, match=message):
    tokenization.validate_case_matches_checkpoint(lower, checkpoint)


def test_case_check_passes_for_matching_or_unknown_names():
  tokenization.validate_case_matches_checkpoint(
      True, "/m/uncased_L-12_H-768_A-12/bert_model.ckpt")
  tokenization.validate_case_matches_checkpoint(False, "/m/mine/bert_model.ckpt")
  tokenization.validate_case_matches_checkpoint(False, "")


# The fast paths (memoised tokenize/encode, encode_many, the compiled path)
# must equal the original composition of BasicTokenizer and WordPiece.

_FULL_TOKENIZERS = {}


def real_tokenizer(name, lower):
  if (name, lower) not in _FULL_TOKENIZERS:
    _FULL_TOKENIZERS[name, lower] = tokenization.FullTokenizer(
        vocab_path(name), lower)
  return _FULL_TOKENIZERS[name, lower]


@functools.cache
def compiled_encoder(tokenizer):
  """The tokenizer's CompiledEncoder, built once: building takes seconds."""
  return batch_encoding.CompiledEncoder(tokenizer)


def assert_fast_equals_exact(tokenizer, texts):
  """tokenize (memoised), encode, the batch paths and basic_tokenize equal
  the original."""
  exact = [original_tokenize(tokenizer, text) for text in texts]
  assert [tokenizer.tokenize(text) for text in texts] == exact
  assert [tokenizer.basic_tokenize(text) for text in texts] == [
      tokenizer.basic_tokenizer.tokenize(text) for text in texts]
  exact_ids = [tokenizer.convert_tokens_to_ids(tokens) for tokens in exact]
  assert [tokenizer.encode(text) for text in texts] == exact_ids
  assert tokenizer.encode_many(texts) == exact_ids
  assert compiled_encoder(tokenizer)(texts) == exact_ids
  assert batch_encoding.encode_batch(tokenizer, texts) == exact_ids


@pytest.mark.shared
@pytest.mark.parametrize("name, lower", VOCAB_CASES)
def test_fast_path_on_the_corpus(name, lower):
  assert_fast_equals_exact(real_tokenizer(name, lower), corpus_lines())


@for_every_vocab_and_adversarial_texts(max_examples=40)
def test_fast_path_on_adversarial_text(name, lower, texts):
  assert_fast_equals_exact(real_tokenizer(name, lower), texts)


def test_fast_path_takes_bytes_and_surrogates(vocab_file):
  tokenizer = tokenization.FullTokenizer(vocab_file, do_lower_case=True)
  texts = [b"UNwant\xc3\xa9d,\xffrunning", "hello \ud800 low", "", "lowest"]
  assert_fast_equals_exact(tokenizer, texts)
  assert tokenizer.encode_many(texts)[0] == [7, 4, 5, 10, 8, 9]
  assert compiled_encoder(tokenizer)(texts)[0] == [
      7, 4, 5, 10, 8, 9]


def test_fast_path_falls_back_where_unicode_versions_differ(tmp_path):
  differences = lower_case_differences()
  if not differences:
    pytest.skip("Python's and ICU's Unicode tables agree on every character")
  char, spellings = sorted(differences.items())[0]
  path = tmp_path / "vocab.txt"
  path.write_text("".join(f"{token}\n" for token in ["[UNK]", *spellings]),
                  encoding="utf-8")
  tokenizer = tokenization.FullTokenizer(str(path), do_lower_case=True)
  assert_fast_equals_exact(tokenizer, [char, f"a {char}", "plain"])


def test_word_cache_is_bounded_and_results_unchanged(vocab_file, monkeypatch):
  monkeypatch.setattr(fast_paths, "_MAX_CACHED_WORDS", 2)
  tokenizer = tokenization.FullTokenizer(vocab_file, do_lower_case=True)
  texts = ["unwanted running", "UNwant\u00E9d,running lowest", "hello ab"]
  for _ in range(2):
    assert [tokenizer.tokenize(text) for text in texts] == [
        original_tokenize(tokenizer, text) for text in texts]
  assert len(tokenizer._word_pieces) <= 2
  assert len(tokenizer._word_tokens) <= 2


def test_cleaning_recompiles_for_new_characters_alone(monkeypatch):
  # The fast check is recompiled once enough texts were slow for characters
  # it did not know; texts that cleaning changes anyway never trigger it.
  monkeypatch.setattr(fast_paths, "_RESCANS_BEFORE_RECOMPILING", 3)
  tables = fast_paths.CharacterTables()
  compiles = []
  compile_unchanged = tables._compile_unchanged
  monkeypatch.setattr(tables, "_compile_unchanged",
                      lambda: compiles.append(1) or compile_unchanged())
  for _ in range(10):
    assert tables.cleaned("\u4e2d\u6587 text") == " \u4e2d  \u6587  text"
  assert not compiles
  for _ in range(4):
    assert tables.cleaned("\u0436\u0443\u043a") == "\u0436\u0443\u043a"
  assert compiles == [1]
  assert tables._changed.search("\u0436\u0443\u043a") is None
