"""Outputs are replaced whole or not at all: a temporary beside each,
renamed over it at the end; special files and links are handled."""

import fcntl
import os
import stat
import uuid

import pytest

from bert_tf.files import atomic_outputs


def test_atomic_write_replaces_only_when_complete(tmp_path):
  path = tmp_path / "out.txt"
  path.write_text("old")
  with atomic_outputs.atomic_write(str(path)) as writer:
    writer.write("new")
    assert path.read_text() == "old"  # not yet visible
  assert path.read_text() == "new"
  with pytest.raises(RuntimeError):
    with atomic_outputs.atomic_write(str(path)) as writer:
      writer.write("half")
      raise RuntimeError("interrupted")
  assert path.read_text() == "new"
  assert os.listdir(tmp_path) == ["out.txt"]


def test_atomic_write_creates_missing_directories(tmp_path):
  path = tmp_path / "new" / "dir" / "out.txt"
  with atomic_outputs.atomic_write(str(path)) as writer:
    writer.write("text")
  assert path.read_text() == "text"


def special_files(directory):
  """A FIFO, a character device (root only: mknod) and a directory, made
  here, never the ones in /dev."""
  made = {}
  os.mkfifo(directory / "fifo")
  made["a FIFO"] = directory / "fifo"
  if os.geteuid() == 0:
    os.mknod(directory / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    made["a character device"] = directory / "null"
  (directory / "adir").mkdir()
  made["a directory"] = directory / "adir"
  return made


def test_special_files_are_refused_not_replaced(tmp_path):
  for kind, path in special_files(tmp_path).items():
    before = os.stat(path)
    with pytest.raises(ValueError, match=f"is {kind}, not a regular file"):
      with atomic_outputs.atomic_write(str(path)) as writer:
        writer.write("never written")
    after = os.stat(path)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)
  assert not [name for name in os.listdir(tmp_path) if ".tmp-" in name]


def test_a_symlink_is_written_through_to_its_target(tmp_path):
  target = tmp_path / "data" / "target.txt"
  target.parent.mkdir()
  target.write_text("old")
  link = tmp_path / "link.txt"
  link.symlink_to(target)
  with atomic_outputs.atomic_write(str(link)) as writer:
    writer.write("new")
  assert link.is_symlink() and os.readlink(link) == str(target)
  assert target.read_text() == "new"
  dangling = tmp_path / "dangling.txt"
  dangling.symlink_to(tmp_path / "data" / "created.txt")
  with atomic_outputs.atomic_write(str(dangling)) as writer:
    writer.write("made")
  assert dangling.is_symlink()
  assert (tmp_path / "data" / "created.txt").read_text() == "made"


def test_the_replaced_file_keeps_its_permissions(tmp_path):
  path = tmp_path / "private.txt"
  path.write_text("old")
  path.chmod(0o600)
  with atomic_outputs.atomic_write(str(path)) as writer:
    writer.write("new")
  assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_set_of_files_is_replaced_together_or_not_at_all(tmp_path):
  paths = [tmp_path / name for name in ("a.txt", "b.txt", "c.txt")]
  for path in paths:
    path.write_text("old")
  with pytest.raises(RuntimeError):
    with atomic_outputs.AtomicFiles([str(path) for path in paths]) as files:
      for file in files:
        file.write("new")
      assert [path.read_text() for path in paths] == ["old"] * 3
      raise RuntimeError("the last file could not be finished")
  assert [path.read_text() for path in paths] == ["old"] * 3
  with pytest.raises(ValueError, match="adir is a directory"):
    (tmp_path / "adir").mkdir()
    with atomic_outputs.AtomicFiles([str(paths[0]), str(tmp_path / "adir")]):
      pass
  assert paths[0].read_text() == "old"
  with atomic_outputs.AtomicFiles([str(path) for path in paths]) as files:
    for file in files:
      file.write("new")
  assert [path.read_text() for path in paths] == ["new"] * 3
  assert sorted(os.listdir(tmp_path)) == ["a.txt", "adir", "b.txt", "c.txt"]


def test_an_output_given_twice_is_refused(tmp_path):
  path = str(tmp_path / "a.txt")
  with pytest.raises(ValueError, match="a.txt is given more than once"):
    with atomic_outputs.AtomicFiles([path, path]):
      pass


def stale_name(path):
  return f"{path}.tmp-{uuid.uuid4().hex}"


def test_stale_temporaries_are_removed_and_held_ones_kept(tmp_path):
  output = tmp_path / "out.txt"
  stale = stale_name(output)
  with open(stale, "w") as killed_run:
    killed_run.write("left by a killed run")
  held = stale_name(output)
  unrelated = [tmp_path / "out.txt.tmp-notours", tmp_path / "other.txt.tmp-"
               f"{uuid.uuid4().hex}", tmp_path / "out.txt.bak"]
  for path in unrelated:
    path.write_text("the user's")
  with open(held, "w") as live_writer:
    fcntl.flock(live_writer, fcntl.LOCK_EX)  # another writer, still running
    with atomic_outputs.atomic_write(str(output)) as writer:
      writer.write("new")
    assert os.path.exists(held) and not os.path.exists(stale)
  assert output.read_text() == "new"
  assert all(path.read_text() == "the user's" for path in unrelated)


def test_checkpoint_style_temporaries_go_as_a_group(tmp_path):
  stem = stale_name(tmp_path / "model.ckpt-5")
  for suffix in ("", ".index", ".data-00000-of-00001"):
    (tmp_path / f"{os.path.basename(stem)}{suffix}").write_text("x")
  (tmp_path / "model.ckpt-5.index").write_text("kept")
  removed = atomic_outputs.remove_stale_temporaries(str(tmp_path),
                                                   r"model\.ckpt-\d+")
  assert len(removed) == 3
  assert os.listdir(tmp_path) == ["model.ckpt-5.index"]


def test_temporary_names_that_are_links_or_fifos_are_not_ours(tmp_path):
  """Only regular files and directories are temporaries: a symlink or FIFO
  bearing such a name is left alone, with what it points to, and so is
  every file that extends its name."""
  users = tmp_path / "users.txt"
  users.write_text("the user's")
  (tmp_path / "users_dir").mkdir()
  (tmp_path / "users_dir" / "keep.txt").write_text("the user's")
  output = tmp_path / "out.txt"
  link = tmp_path / stale_name(output.name)
  link.symlink_to(users)
  dir_link = tmp_path / stale_name(output.name)
  dir_link.symlink_to(tmp_path / "users_dir")
  fifo = tmp_path / stale_name(output.name)
  os.mkfifo(fifo)
  beside = tmp_path / f"{fifo.name}.index"
  beside.write_text("belongs to the FIFO's name")
  stale = tmp_path / stale_name(output.name)
  stale.write_text("left by a killed run")
  with atomic_outputs.atomic_write(str(output)) as writer:
    writer.write("new")
  assert not stale.exists()
  assert link.is_symlink() and dir_link.is_symlink()
  assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and beside.exists()
  assert users.read_text() == "the user's"
  assert (tmp_path / "users_dir" / "keep.txt").read_text() == "the user's"
