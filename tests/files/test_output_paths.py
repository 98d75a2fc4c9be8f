import os

import pytest

from bert_tf.files.output_paths import check_outputs


@pytest.fixture()
def corpus(tmp_path):
  path = tmp_path / "corpus.txt"
  path.write_text("the user's text")
  return path


@pytest.mark.parametrize("make_output", [
    lambda corpus: corpus,
    lambda corpus: corpus.parent / "." / "corpus.txt",
    lambda corpus: _link(corpus, corpus.parent / "link.txt", os.symlink),
    lambda corpus: _link(corpus, corpus.parent / "hard.txt", os.link),
], ids=["same", "dotted", "symlink", "hard link"])
def test_an_output_that_is_an_input_names_both_flags(corpus, make_output):
  output = make_output(corpus)
  with pytest.raises(ValueError, match=(
      f"--output_file={output} is the same file as --input_file={corpus}; "
      f"refusing to overwrite an input")):
    check_outputs(outputs=[("--output_file", str(output))],
                  inputs=[("--vocab_file", "/nonexistent/vocab.txt"),
                          ("--input_file", str(corpus))])


def _link(source, link, make):
  make(source, link)
  return link


def test_two_outputs_that_are_one_file(tmp_path):
  with pytest.raises(ValueError, match="--output_dir=.*b is the same file as "
                     "--output_file=.*b; refusing to overwrite another output"):
    check_outputs(outputs=[("--output_file", str(tmp_path / "b")),
                           ("--output_dir", str(tmp_path / "." / "b"))])


def test_special_files_and_paths_under_a_file(tmp_path, corpus):
  os.mkfifo(tmp_path / "fifo")
  cases = {
      str(tmp_path / "fifo"): "is a FIFO, not a regular file; refusing to "
                              "replace it",
      str(tmp_path): "is a directory, not a regular file",
      str(corpus / "new.txt"): f": {corpus} is a file, not a directory",
      str(corpus / "deeper" / "new.txt"): f"{corpus} is a file, not a "
                                          f"directory",
  }
  for output, message in cases.items():
    with pytest.raises(ValueError, match=message):
      check_outputs(outputs=[("--output_file", output)])
  check_outputs(outputs=[("--output_file", str(tmp_path / "new" / "a.txt"))])


def test_output_directories(tmp_path, corpus):
  with pytest.raises(ValueError, match=f"--output_dir={corpus} is a file, "
                     f"not a directory"):
    check_outputs(output_dirs=[("--output_dir", str(corpus))])
  os.mkfifo(tmp_path / "fifo")
  with pytest.raises(ValueError, match="is a FIFO, not a directory"):
    check_outputs(output_dirs=[("--export_dir", str(tmp_path / "fifo"))])
  with pytest.raises(ValueError, match="is a file, not a directory"):
    check_outputs(output_dirs=[("--output_dir", str(corpus / "out"))])
  check_outputs(output_dirs=[("--output_dir", str(tmp_path)),
                             ("--output_dir", str(tmp_path / "new"))])


def test_dot_dot_through_a_missing_directory_is_still_the_input(corpus):
  output = corpus.parent / "not_yet" / ".." / "corpus.txt"
  with pytest.raises(ValueError, match="is the same file as --input_file"):
    check_outputs(outputs=[("--output_file", str(output))],
                  inputs=[("--input_file", str(corpus))])


def test_output_directory_forms(tmp_path, corpus):
  """An empty flag is refused; a symlink counts as its target, a dangling
  one's too (made when written), and a loop is refused."""
  with pytest.raises(ValueError, match="^--output_dir is empty"):
    check_outputs(output_dirs=[("--output_dir", "")])
  dangling = tmp_path / "dangling"
  dangling.symlink_to(corpus / "out")
  with pytest.raises(ValueError, match=(
      f"--output_dir={dangling}: {corpus} is a file, not a directory")):
    check_outputs(output_dirs=[("--output_dir", str(dangling))])
  loop = tmp_path / "loop"
  loop.symlink_to(loop)
  with pytest.raises(ValueError, match="loop is a symlink loop, not a dir"):
    check_outputs(output_dirs=[("--output_dir", str(loop))])
  (tmp_path / "to_dir").symlink_to(tmp_path / "missing" / "out")
  (tmp_path / "empty").mkdir()
  (tmp_path / "to_empty").symlink_to(tmp_path / "empty")
  check_outputs(output_dirs=[("--output_dir", str(tmp_path / "to_dir")),
                             ("--export_dir", str(tmp_path / "to_empty"))])
