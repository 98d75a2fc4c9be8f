"""The run lock: a run owns its output directory while it lives.

A lock file in the directory is held with flock() (never through a symlink),
so a second run on the same directory is refused by name, and a killed run's
lock frees itself. The same flock marks a temporary output as in use.
"""

import contextlib
import errno
import fcntl
import os
import stat

from bert_tf.files import storage


def try_lock(descriptor):
  """Takes flock(LOCK_EX) without waiting; False when another holds it."""
  try:
    fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return True
  except BlockingIOError:
    return False


def is_held(path):
  """Whether a live writer holds the temporary at `path` (a file or a
  directory) with flock; a symlink is not followed."""
  try:  # O_NONBLOCK: opening a FIFO must not wait for a writer
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
  except OSError:
    return False
  try:
    return not try_lock(descriptor)
  finally:
    os.close(descriptor)


RUN_LOCK_FILE = ".bert_tf_run.lock"


@contextlib.contextmanager
def owned_directory(path, flag, owned=True):
  """Holds directory `path` (made if missing) for one run while the block
  runs: another run into it, in any process, is refused while this one
  lives, so two runs cannot mix their checkpoints and results.

  The hold is flock() on <path>/.bert_tf_run.lock, which holds the owner's
  pid; the kernel releases it when the process ends, however it ends (kill
  -9 included), so no stale hold outlives a run. The file is removed when
  the block ends (and the directory, if the block made it and left it
  empty). It works on local disks; gs:// and other URLs have no such lock,
  and nothing is held there.

  Args:
    flag: the flag that named `path`, for the message.
    owned: False to hold nothing (a multi-worker run's other workers, which
      share the chief's directory).

  Raises:
    ValueError: another live run holds it, naming `path` and its pid.
  """
  if not owned or storage.is_url(path):
    yield
    return
  made = not os.path.isdir(path)
  storage.makedirs(path)
  lock_path = os.path.join(path, RUN_LOCK_FILE)
  descriptor = _take_lock_file(lock_path, flag, path)
  try:
    os.ftruncate(descriptor, 0)
    os.pwrite(descriptor, f"{os.getpid()}\n".encode(), 0)
    yield
  finally:
    # Still held: no other run can take it meanwhile; only the file this
    # run holds is removed, never one put in its place.
    with contextlib.suppress(FileNotFoundError):
      if os.lstat(lock_path).st_ino == os.fstat(descriptor).st_ino:
        os.unlink(lock_path)
    os.close(descriptor)
    if made:
      with contextlib.suppress(OSError):
        os.rmdir(os.path.realpath(path))  # only if empty


# Opening the lock follows no symlink (O_NOFOLLOW) and waits for no FIFO
# or device (O_NONBLOCK): only a regular file is ever written.
_LOCK_OPEN = (os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
              | os.O_NOCTTY)


def _take_lock_file(lock_path, flag, path):
  """An open descriptor of lock_path, a regular file, with flock held;
  retried where the file was removed (by its last owner, ending) between
  open and flock.

  Raises:
    ValueError: lock_path is a symlink, a directory, a FIFO, ..., which is
      left as it is.
  """
  while True:
    try:
      descriptor = os.open(lock_path, _LOCK_OPEN, 0o666)
    except OSError as error:
      if error.errno not in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
        raise
      raise _not_a_lock_file(lock_path, flag, path) from None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
      os.close(descriptor)
      raise _not_a_lock_file(lock_path, flag, path)
    if not try_lock(descriptor):
      holder = os.pread(descriptor, 32, 0).decode(errors="replace").strip()
      os.close(descriptor)
      raise ValueError(
          f"{flag}={path} is in use by another run (pid {holder or '?'}); "
          f"two runs into one directory would mix their checkpoints and "
          f"results: wait for it to end or choose another {flag}")
    try:
      if os.fstat(descriptor).st_ino == os.lstat(lock_path).st_ino:
        return descriptor
    except FileNotFoundError:
      pass
    os.close(descriptor)


def _not_a_lock_file(lock_path, flag, path):
  kind = "a symlink" if os.path.islink(lock_path) else \
      storage.kind_of_file(lock_path) or "not a regular file"
  return ValueError(f"{flag}={path}: {lock_path} is {kind}, not the run lock "
                    f"file bert_tf keeps there; refusing to use it (remove "
                    f"it if nothing needs it)")
