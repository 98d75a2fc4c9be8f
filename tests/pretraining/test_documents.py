import pytest

from bert_tf import tokenization
from bert_tf.pretraining.documents import read_documents

VOCAB = ["[UNK]", "a", "b", "c", "d", "e"]


@pytest.fixture()
def tokenizer(tmp_path):
  path = tmp_path / "vocab.txt"
  path.write_text("\n".join(VOCAB) + "\n")
  return tokenization.FullTokenizer(str(path), do_lower_case=True)


def test_blank_lines_split_documents_which_run_across_files(tmp_path,
                                                            tokenizer):
  first = tmp_path / "1.txt"
  first.write_bytes(b"a b\r\n\n\n  \x1c \nc\nD\n")
  second = tmp_path / "2.txt"
  second.write_bytes(b"e\n\x07\n\na\n")
  documents = read_documents([str(first), str(second)], tokenizer)
  # "\x1c" is whitespace to str.strip(): its line starts a document too;
  # "\x07" tokenises to nothing and is skipped.
  assert documents == [[[1, 2]], [[3], [4], [5]], [[1]]]


def test_text_that_is_not_utf8_is_refused_naming_file_and_line(tmp_path,
                                                              tokenizer):
  # The original's readline decodes strictly: it stops at these bytes (with
  # a traceback) rather than dropping them.
  path = tmp_path / "corpus.txt"
  path.write_bytes(b"a b\n\nc \xd0 d\n")
  with pytest.raises(ValueError, match=r"corpus.txt:3: not UTF-8 text"):
    read_documents([str(path)], tokenizer)
