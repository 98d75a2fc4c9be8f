import os

import pytest

from bert_tf import file_io


def test_atomic_write_replaces_only_when_complete(tmp_path):
  path = tmp_path / "out.txt"
  path.write_text("old")
  with file_io.atomic_write(str(path)) as writer:
    writer.write("new")
    assert path.read_text() == "old"  # not yet visible
  assert path.read_text() == "new"
  with pytest.raises(RuntimeError):
    with file_io.atomic_write(str(path)) as writer:
      writer.write("half")
      raise RuntimeError("interrupted")
  assert path.read_text() == "new"
  assert os.listdir(tmp_path) == ["out.txt"]


def test_atomic_write_creates_missing_directories(tmp_path):
  path = tmp_path / "new" / "dir" / "out.txt"
  with file_io.atomic_write(str(path)) as writer:
    writer.write("text")
  assert path.read_text() == "text"


def test_input_files_names_the_flag_and_the_glob(tmp_path):
  (tmp_path / "b.txt").write_text("text")
  (tmp_path / "a.txt").write_text("text")
  (tmp_path / "empty.txt").write_text("")
  assert file_io.input_files(f"{tmp_path}/[ab].txt") == [
      str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
  with pytest.raises(ValueError, match="--corpus: .*nothing.txt matches no"):
    file_io.input_files([str(tmp_path / "nothing.txt")], flag_name="--corpus")
  with pytest.raises(ValueError, match="empty.txt is empty"):
    file_io.input_files(f"{tmp_path}/a.txt,{tmp_path}/empty.txt")
