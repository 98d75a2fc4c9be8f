import shutil

import pytest

import bert_tf
from tests.support.helpers import ORIGINAL_TINY


def released_dir(tmp_path, vocab_size=99):
  """A directory laid out as Google released models (no `checkpoint` file)."""
  for suffix in (".index", ".data-00000-of-00001"):
    shutil.copy(f"{ORIGINAL_TINY}/bert_model.ckpt{suffix}", tmp_path)
  shutil.copy(f"{ORIGINAL_TINY}/bert_config.json", tmp_path)
  (tmp_path / "vocab.txt").write_text(
      "".join(f"token{index}\n" for index in range(vocab_size)))
  return str(tmp_path)


@pytest.mark.shared
def test_opens_a_released_model_directory(tmp_path):
  pretrained = bert_tf.load_pretrained(released_dir(tmp_path))
  assert isinstance(pretrained.model, bert_tf.BertPretrainer)
  assert pretrained.config.vocab_size == 99
  assert pretrained.vocab_file == str(tmp_path / "vocab.txt")
  assert len(pretrained.load_report.loaded) == 46


@pytest.mark.shared
def test_builds_the_requested_model_class(tmp_path):
  pretrained = bert_tf.load_pretrained(released_dir(tmp_path),
                                       model_class=bert_tf.BertEncoder)
  assert isinstance(pretrained.model, bert_tf.BertEncoder)
  assert len(pretrained.load_report.unused) == 7


@pytest.mark.shared
def test_vocabulary_larger_than_the_table_is_refused(tmp_path):
  with pytest.raises(ValueError, match="vocab.txt: 120 tokens, but vocab_size"):
    bert_tf.load_pretrained(released_dir(tmp_path, vocab_size=120))


@pytest.mark.shared
def test_missing_vocabulary_is_named(tmp_path):
  directory = released_dir(tmp_path)
  (tmp_path / "vocab.txt").unlink()
  with pytest.raises(FileNotFoundError, match="vocab.txt: missing"):
    bert_tf.load_pretrained(directory)
