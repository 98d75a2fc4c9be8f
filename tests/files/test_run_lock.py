import os

import pytest

from bert_tf.files import run_lock
from tests.support.helpers import hold_in_another_process


def test_a_directory_is_owned_by_one_run_at_a_time(tmp_path):
  directory = tmp_path / "output"
  holder = hold_in_another_process(directory)
  try:
    with pytest.raises(ValueError, match=(
        f"--output_dir={directory} is in use by another run "
        f"\\(pid {holder.pid}\\)")):
      with run_lock.owned_directory(str(directory), "--output_dir"):
        pass
  finally:
    holder.kill()  # as kill -9: the kernel lets go of the hold
    holder.wait()
  with run_lock.owned_directory(str(directory), "--output_dir"):
    with pytest.raises(ValueError, match=f"pid {os.getpid()}"):
      with run_lock.owned_directory(str(directory), "--output_dir"):
        pass
  with run_lock.owned_directory(str(directory), "--output_dir", owned=False):
    pass
  assert os.listdir(directory) == []  # the lock file goes with its run
  fresh = tmp_path / "fresh"
  with pytest.raises(RuntimeError):
    with run_lock.owned_directory(str(fresh), "--output_dir"):
      assert os.listdir(fresh) == [run_lock.RUN_LOCK_FILE]
      raise RuntimeError("the run failed before writing anything")
  assert not fresh.exists()


def test_the_run_lock_follows_no_link_and_opens_no_special_file(tmp_path):
  """A lock name that is a symlink (to a user's file, or dangling), a FIFO
  or a directory is refused, naming it, and left as it was: the user's
  file is neither truncated nor given a pid."""
  users = tmp_path / "users.txt"
  users.write_text("the user's")
  makers = [
      ("a symlink", lambda lock: lock.symlink_to(users)),
      ("a symlink", lambda lock: lock.symlink_to(tmp_path / "nowhere")),
      ("a FIFO", os.mkfifo),
      ("a directory", lambda lock: lock.mkdir()),
  ]
  for number, (kind, make) in enumerate(makers):
    directory = tmp_path / f"output{number}"
    directory.mkdir()
    lock = directory / run_lock.RUN_LOCK_FILE
    make(lock)
    before = os.lstat(lock)
    with pytest.raises(ValueError, match=(
        f"--output_dir={directory}: {lock} is {kind}, not the run "
        f"lock file")):
      with run_lock.owned_directory(str(directory), "--output_dir"):
        pass
    after = os.lstat(lock)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)
  assert users.read_text() == "the user's"
  assert not (tmp_path / "nowhere").exists()


def test_a_dangling_output_dir_link_is_held_in_its_made_target(tmp_path):
  link = tmp_path / "link"
  link.symlink_to(tmp_path / "made" / "output")
  with run_lock.owned_directory(str(link), "--output_dir"):
    assert os.listdir(tmp_path / "made" / "output") == [run_lock.RUN_LOCK_FILE]
  assert link.is_symlink()
  assert not (tmp_path / "made" / "output").exists()  # made, left empty
