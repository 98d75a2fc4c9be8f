import logging
import os

import pytest

from bert_tf import tokenization
from bert_tf.files import storage
from bert_tf.wordpiece import learning, vocabulary
from tests.support.helpers import SHARED_DIR

VOCAB_DIR = os.path.join(SHARED_DIR, "vocab")
# (file in ../shared/vocab, manifest name, lower-cased)
REAL_VOCABS = [
    ("bert-base-uncased-vocab.txt", "uncased_L-12_H-768_A-12", True),
    ("bert-base-cased-vocab.txt", "cased_L-12_H-768_A-12", False),
    ("bert-base-multilingual-cased-vocab.txt", "multi_cased_L-12_H-768_A-12",
     False),
    ("chinese_L-12_H-768_A-12-vocab.txt", "chinese_L-12_H-768_A-12", True),
]
SPECIALS = ["[PAD]", "[unused0]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
UNCASED_PIECES = ["the", "of", "and", "##s", "##ing", "run", "want", "##ed",
                  ",", ".", "1", "中", "unaffable", "cafe"]
CASED_PIECES = ["The", "the", "Of", "and", "##s", "##ing", "Run", "want",
                "##ed", ",", ".", "1", "London", "café"]


def vocab_file(tmp_path, tokens, name="vocab.txt"):
  path = str(tmp_path / name)
  learning.write_vocab(tokens, path)
  return path


def real_vocab(name):
  return os.path.join(VOCAB_DIR, name)


def test_release_layout_puts_specials_first_then_pieces_once():
  tokens = learning.release_layout(
      ["the", "[CLS]", "##s", "the", "[PAD]", "a"], num_unused=3)
  assert tokens == ["[PAD]", "[unused0]", "[unused1]", "[unused2]", "[UNK]",
                    "[CLS]", "[SEP]", "[MASK]", "the", "##s", "a"]
  assert learning.release_layout([], num_unused=0) == [
      "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


@pytest.mark.shared
def test_default_layout_gives_the_released_special_ids():
  with open(real_vocab("bert-base-uncased-vocab.txt"), encoding="utf-8") as f:
    released = f.read().splitlines()[:104]
  assert learning.release_layout([]) == released
  ids = tokenization.load_vocab(real_vocab("bert-base-cased-vocab.txt"))
  layout = learning.release_layout([])
  for token in ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]:
    assert layout.index(token) == ids[token]


def test_write_vocab_round_trips_through_load_vocab(tmp_path):
  tokens = learning.release_layout(["héllo", "##s", "中"], num_unused=2)
  path = vocab_file(tmp_path, tokens)
  assert list(tokenization.load_vocab(path)) == tokens
  assert os.listdir(tmp_path) == ["vocab.txt"]


def test_write_vocab_replaces_whole_file_or_leaves_it(tmp_path, monkeypatch):
  path = vocab_file(tmp_path, ["[PAD]", "old"])
  learning.write_vocab(["[PAD]", "new", "tokens"], path)
  assert list(tokenization.load_vocab(path)) == ["[PAD]", "new", "tokens"]

  def failing_rename(*args, **kwargs):
    raise OSError("disk full")
  monkeypatch.setattr(storage, "rename", failing_rename)
  with pytest.raises(OSError, match="disk full"):
    learning.write_vocab(["[PAD]", "newer"], path)
  assert list(tokenization.load_vocab(path)) == ["[PAD]", "new", "tokens"]
  assert os.listdir(tmp_path) == ["vocab.txt"]


@pytest.mark.parametrize("tokens", [["a", " b"], ["a", "b\nc"], ["a", ""],
                                    ["a", "b", "a"]])
def test_write_vocab_refuses_tokens_that_cannot_be_read_back(tmp_path, tokens):
  path = str(tmp_path / "vocab.txt")
  with pytest.raises(ValueError, match="vocab.txt"):
    learning.write_vocab(tokens, path)
  assert not os.listdir(tmp_path)


def test_manifest_is_consistent():
  entries = vocabulary.official_vocabularies()
  assert len({entry.name for entry in entries}) == len(entries) == 5
  md5s = [entry.md5 for entry in entries if entry.md5 is not None]
  assert len(set(md5s)) == len(md5s) == 4
  by_name = {entry.name: entry for entry in entries}
  multilingual = by_name["multilingual_L-12_H-768_A-12"]
  assert (multilingual.size, multilingual.md5, multilingual.lower_cased) == (
      105879, None, True)
  assert all(entry.name in entry.models for entry in entries)


@pytest.mark.shared
@pytest.mark.parametrize("file_name,name,lower_cased", REAL_VOCABS)
def test_manifest_identifies_real_vocab(file_name, name, lower_cased):
  path = real_vocab(file_name)
  entry = vocabulary.official_vocab(path)
  assert entry is not None and entry.name == name
  assert entry.size == len(tokenization.load_vocab(path))
  assert entry.lower_cased == lower_cased
  assert vocabulary.vocab_is_lower_cased(path) == lower_cased


@pytest.mark.shared
@pytest.mark.parametrize("file_name,name,lower_cased", REAL_VOCABS)
def test_content_judges_real_vocab_casing(file_name, name, lower_cased):
  del name  # judged without the manifest
  tokens = list(tokenization.load_vocab(real_vocab(file_name)))
  assert vocabulary.looks_lower_cased(tokens) == lower_cased


@pytest.mark.shared
def test_edited_official_vocab_is_judged_by_content(tmp_path):
  with open(real_vocab("bert-base-cased-vocab.txt"), encoding="utf-8") as f:
    tokens = f.read().splitlines() + ["Added"]
  path = vocab_file(tmp_path, tokens)
  assert vocabulary.official_vocab(path) is None
  assert vocabulary.vocab_is_lower_cased(path) is False


@pytest.mark.parametrize("pieces,lower_cased", [
    (UNCASED_PIECES, True),
    (CASED_PIECES, False),
    # A handful of upper-case tokens added to a big uncased vocabulary.
    (UNCASED_PIECES + [f"word{i}" for i in range(400)] + ["NASA", "GPU"],
     True),
    # Accents survive only without lower-casing (which strips them).
    (["über", "##é", "cafe", "the", "a", "of"], False),
    (["[CLS]", "[SEP]", "<S>", "<T>", "[unused1]", "the", "a"], True),
])
def test_vocab_is_lower_cased_by_content(tmp_path, pieces, lower_cased):
  path = vocab_file(tmp_path, learning.release_layout(pieces))
  assert vocabulary.official_vocab(path) is None
  assert vocabulary.vocab_is_lower_cased(path) is lower_cased


def test_check_casing_warns_on_contradiction(tmp_path, caplog):
  cased = vocab_file(tmp_path, learning.release_layout(CASED_PIECES),
                     "cased.txt")
  uncased = vocab_file(tmp_path, learning.release_layout(UNCASED_PIECES),
                       "uncased.txt")
  with caplog.at_level(logging.WARNING):
    assert vocabulary.check_casing(cased, False) is False
    assert vocabulary.check_casing(uncased, True) is True
  assert not caplog.records

  with caplog.at_level(logging.WARNING):
    assert vocabulary.check_casing(cased, True) is False
  assert len(caplog.records) == 1
  message = caplog.records[0].getMessage()
  assert cased in message and "cased" in message
  assert "--do_lower_case=False" in message

  caplog.clear()
  with caplog.at_level(logging.WARNING):
    assert vocabulary.check_casing(uncased, False) is True
  assert "--do_lower_case=True" in caplog.records[0].getMessage()


@pytest.mark.shared
def test_check_casing_names_the_official_vocab(caplog):
  path = real_vocab("bert-base-uncased-vocab.txt")
  with caplog.at_level(logging.WARNING):
    vocabulary.check_casing(path, False)
  message = caplog.records[0].getMessage()
  assert "uncased_L-12_H-768_A-12" in message
  assert "--do_lower_case=True" in message


def test_check_casing_keeps_the_original_checkpoint_name_check(
    tmp_path):
  uncased = vocab_file(tmp_path, learning.release_layout(UNCASED_PIECES))
  with pytest.raises(ValueError, match="--do_lower_case=True"):
    vocabulary.check_casing(
        uncased, False, "models/uncased_L-12_H-768_A-12/bert_model.ckpt")
  with pytest.raises(ValueError, match="--do_lower_case=False"):
    vocabulary.check_casing(
        uncased, True, "models/cased_L-12_H-768_A-12/bert_model.ckpt")


def test_learn_vocab_follows_do_lower_case():
  lines = ["The Café in London is open.", "the CAFÉ in Paris is closed."] * 20
  uncased = learning.learn_vocab(lines, 150, do_lower_case=True,
                                   num_unused=5, min_count=2)
  cased = learning.learn_vocab(lines, 150, do_lower_case=False,
                                 num_unused=5, min_count=2)
  assert uncased[:10] == cased[:10] == learning.release_layout([], 5)
  assert {"cafe", "london", "the"} <= set(uncased)
  assert {"Café", "CAFÉ", "London", "The", "the"} <= set(cased)
  assert vocabulary.looks_lower_cased(uncased)
  assert not vocabulary.looks_lower_cased(cased)


def test_learn_vocab_never_exceeds_vocab_size(caplog):
  """Every character takes two tokens (c and ##c): text with more characters
  than the room keeps the most frequent ones, and says so."""
  common = "".join(chr(0x4E00 + index) for index in range(10))
  rare = [chr(0x5E00 + index) for index in range(200)]
  lines = [f"{common} {rare[index]} words" for index in range(200)] * 3
  with caplog.at_level(logging.WARNING):
    tokens = learning.learn_vocab(lines, 60, num_unused=5, min_count=2)
  assert len(tokens) == 60
  assert set(common) <= set(tokens)  # the frequent characters are kept
  assert "vocab_size 60 holds 25 of the 215 characters" in caplog.text
  assert len(learning.learn_vocab(lines[:30], 500, num_unused=5,
                                    min_count=2)) <= 500


def test_check_vocab_fits_names_both_files(tmp_path):
  path = vocab_file(tmp_path, [*SPECIALS, *UNCASED_PIECES])
  vocabulary.check_vocab_fits(path, 20, "bert_config.json")
  with pytest.raises(ValueError, match=f"{path}: 20 tokens, but vocab_size "
                     f"in bert_config.json is 19"):
    vocabulary.check_vocab_fits(path, 19, "bert_config.json")


def test_demo_vocab_is_a_small_lower_cased_release_vocab():
  path = vocabulary.demo_vocab_file()
  tokens = list(tokenization.load_vocab(path))
  assert 1900 <= len(tokens) <= 2000
  assert tokens[:104] == learning.release_layout([])
  assert vocabulary.vocab_is_lower_cased(path)
  tokenizer = tokenization.FullTokenizer(path, do_lower_case=True)
  pieces = tokenizer.tokenize("Return a new list containing all items from "
                              "the iterable in ascending order.")
  assert "[UNK]" not in pieces and "return" in pieces
