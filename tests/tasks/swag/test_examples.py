"""The swagaf CSV reader: quoting, test files without labels, bad rows."""

import pytest

from bert_tf.tasks.swag import examples as swag
from tests.support.swag_fixtures import HEADER, write_swag


def row(index, sent1="a man sits", sent2="he", label="0", endings=None):
  return [str(index), "lsmdc0001", "7", f"{sent1} {sent2}", sent1, sent2,
          "gold", *(endings or ["stands.", "sleeps.", "eats.", "runs."]),
          label]


def test_quoted_fields_with_commas_quotes_and_newlines(tmp_path):
  path = tmp_path / "val.csv"
  write_swag(path, [
      row(0, sent1='He says, "hi,\nthere"', sent2="then, she",
          endings=['waves, "bye".', "b", "c\r\nd", ""]),
      row(1, label="3")])
  # csv's \r\n line ends; the first row spans lines 2 to 5.
  first, second = swag.read_swag(str(path), labelled=True)
  assert first == swag.SwagExample(
      "0", 'He says, "hi,\nthere"', "then, she",
      ('waves, "bye".', "b", "c\r\nd", ""), 0, 2)
  assert (second.index, second.label, second.line) == ("1", 3, 6)


def test_test_files_may_lack_labels(tmp_path):
  write_swag(tmp_path / "test.csv", [row(0)[:-1], row(1)[:-1]],
             labelled=False)
  assert [example.label for example in swag.read_swag(
      str(tmp_path / "test.csv"), labelled=False)] == [None, None]
  write_swag(tmp_path / "empty_labels.csv", [row(0, label=""),
                                             row(1, label="2")])
  assert [example.label for example in swag.read_swag(
      str(tmp_path / "empty_labels.csv"), labelled=False)] == [None, 2]


@pytest.mark.parametrize("text,expected", [
    (",".join(HEADER) + "\n" + ",".join(row(0)) + "\n"
     + ",".join(row(1)[:-2]) + "\n",
     r"x.csv:3: 10 fields, expected 12"),
    (",".join(HEADER) + "\n" + ",".join(row(0)) + "\n" + ",".join(row(1))
     + "\n" + '"1,2",' + ",".join(row(2, label="4")[1:]) + "\n",
     r"x.csv:4: label '4': expected 0 to 3"),
    (",".join(HEADER) + "\n" + ",".join(row(0, label="")) + "\n",
     r"x.csv:2: label '': expected 0 to 3"),
    ("", r"x.csv: empty file; expected the swagaf header ,video-id,"),
    (",".join(HEADER) + "\n", r"x.csv: no rows"),
    ("video-id,sent1,sent2\n", r"x.csv:1: not the swagaf header"),
    ((",".join(HEADER) + "\n").encode() + b"0,\xff\n",
     r"x.csv:2: not UTF-8 text"),
])
def test_bad_input_is_named(tmp_path, text, expected):
  path = tmp_path / "x.csv"
  path.write_bytes(text if isinstance(text, bytes) else text.encode())
  with pytest.raises(ValueError, match=expected):
    swag.read_swag(str(path), labelled=True)


def test_a_missing_file_names_the_flag(tmp_path):
  with pytest.raises(ValueError, match=r"--data_dir=.*train.csv does not"):
    swag.read_swag(str(tmp_path / "train.csv"), labelled=True)
