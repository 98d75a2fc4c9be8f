"""Files by local path or by URL (gs://, hdfs://, ...), TensorFlow only for
URLs; a full disk named as one.

The original read everything through tf.gfile, which handles cloud storage
but costs a TensorFlow import; tools such as create_pretraining_data start in
a fraction of a second on local files and still accept URLs.
"""

import contextlib
import errno
import glob as local_glob
import os
import stat
import sys


class DiskFullError(OSError):
  """A write that ran out of space, naming what was being written: the
  operating system's error names no file, TensorFlow's a temporary."""

  def __str__(self):
    return self.strerror


def is_disk_full(error):
  """Whether an exception is a write failing for want of space (ENOSPC,
  EDQUOT). TensorFlow raises ResourceExhaustedError for them and
  safetensors its SafetensorError, neither an OSError: those are known by
  the operating system's message they carry."""
  if isinstance(error, OSError):
    return error.errno in (errno.ENOSPC, errno.EDQUOT)
  return isinstance(error, _library_errors()) and any(
      reason in str(error) for reason in
      ("No space left on device", "Disk quota exceeded"))


def _library_errors():
  """The write errors of the libraries loaded (never imported for this)."""
  errors = ()
  if "tensorflow" in sys.modules:
    errors += (sys.modules["tensorflow"].errors.ResourceExhaustedError,)
  if "safetensors" in sys.modules:
    errors += (sys.modules["safetensors"].SafetensorError,)
  return errors


@contextlib.contextmanager
def naming_full_disk(what):
  """Running out of space inside the block raises DiskFullError naming
  `what` (the file or directory being written); one that names a file
  inside `what`'s temporary names `what` instead, which is what the user
  asked for (the temporary is removed)."""
  try:
    yield
  except DiskFullError as error:
    if not str(error.filename).startswith(f"{what}.tmp-"):
      raise
    raise _disk_full(what) from error
  except Exception as error:  # pylint: disable=broad-except
    if not is_disk_full(error):
      raise
    raise _disk_full(what) from error


def _disk_full(what):
  return DiskFullError(errno.ENOSPC, f"no space left on device writing {what}",
                       str(what))


def is_url(path):
  return "://" in str(path)


def gfile():
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  return tf.io.gfile


def open_file(path, mode="r"):
  """open(); text modes read and write UTF-8."""
  if is_url(path):
    return gfile().GFile(path, mode)
  if "b" in mode:
    return open(path, mode)
  return open(path, mode, encoding="utf-8")


def glob(pattern):
  if is_url(pattern):
    return gfile().glob(pattern)
  return sorted(local_glob.glob(pattern))


def glob_escape(path):
  """`path` with glob's special characters escaped, to match it literally."""
  return local_glob.escape(path)


def exists(path):
  return gfile().exists(path) if is_url(path) else os.path.exists(path)


def isdir(path):
  return gfile().isdir(path) if is_url(path) else os.path.isdir(path)


def size(path):
  return gfile().stat(path).length if is_url(path) else os.path.getsize(path)


def makedirs(path):
  """Makes `path` and its missing parents; a local symlink is followed, so
  that a dangling one's target is made, as for files."""
  if is_url(path):
    gfile().makedirs(path)
  else:
    os.makedirs(os.path.realpath(path), exist_ok=True)


def rename(source, target):
  """Renames, replacing `target`: how finished files take their final name."""
  if is_url(source):
    gfile().rename(source, target, overwrite=True)
  else:
    os.replace(source, target)


def remove(path):
  if is_url(path):
    gfile().remove(path)
  else:
    os.remove(path)


def resolved(path):
  """Where writing `path` lands: local symlinks followed to their target
  (which is written through, never replaced); URLs as given."""
  return str(path) if is_url(path) else os.path.realpath(path)


def kind_of_file(path):
  """"a directory", "a FIFO", ... for what exists at `path` (symlinks
  followed) and is not a regular file; None for a regular file or nothing."""
  if is_url(path):
    return "a directory" if exists(path) and isdir(path) else None
  try:
    mode = os.stat(path).st_mode
  except (FileNotFoundError, NotADirectoryError):
    return None
  except OSError as error:
    if error.errno == errno.ELOOP:
      return "a symlink loop"
    raise
  for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                     (stat.S_ISCHR, "a character device"),
                     (stat.S_ISBLK, "a block device"),
                     (stat.S_ISSOCK, "a socket")):
    if test(mode):
      return kind
  return None if stat.S_ISREG(mode) else "not a regular file"


def lstat_kind(path):
  """"file", "directory", "other" (a symlink, FIFO, ...) or None (nothing
  there) for `path` itself, no symlink followed."""
  try:
    mode = os.lstat(path).st_mode
  except FileNotFoundError:
    return None
  if stat.S_ISREG(mode):
    return "file"
  return "directory" if stat.S_ISDIR(mode) else "other"
