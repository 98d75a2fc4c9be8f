import os

import pytest

from bert_tf.files import input_checks


def test_input_files_names_the_flag_and_the_glob(tmp_path):
  (tmp_path / "b.txt").write_text("text")
  (tmp_path / "a.txt").write_text("text")
  (tmp_path / "empty.txt").write_text("")
  assert input_checks.input_files(f"{tmp_path}/[ab].txt") == [
      str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
  with pytest.raises(ValueError, match="--corpus: .*nothing.txt matches no"):
    input_checks.input_files([str(tmp_path / "nothing.txt")],
                             flag_name="--corpus")
  with pytest.raises(ValueError, match="empty.txt is empty"):
    input_checks.input_files(f"{tmp_path}/a.txt,{tmp_path}/empty.txt")


def test_input_files_refuses_special_files(tmp_path):
  os.mkfifo(tmp_path / "fifo")
  with pytest.raises(ValueError, match="fifo is a FIFO, not a file"):
    input_checks.input_files(str(tmp_path / "fifo"))
