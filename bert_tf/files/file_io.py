"""Files by local path or by URL (gs://, hdfs://, ...), TensorFlow only for URLs.

The original read everything through tf.gfile, which handles cloud storage
but costs a TensorFlow import; tools such as create_pretraining_data start in
a fraction of a second on local files and still accept URLs.

Every output is written under a temporary name next to it,
`<name>.tmp-<32 hex digits>`, and renamed over its final name when complete.
While its writer runs, a local temporary is held with flock(); temporaries
that nobody holds were left by a killed run and are removed the next time
that output (or, for checkpoints and exports, that directory) is written.
"""

import contextlib
import errno
import fcntl
import glob as local_glob
import os
import re
import shutil
import stat
import sys
import uuid

_TEMPORARY = r"\.tmp-[0-9a-f]{32}"


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


def _gfile():
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  return tf.io.gfile


def open_file(path, mode="r"):
  """open(); text modes read and write UTF-8."""
  if is_url(path):
    return _gfile().GFile(path, mode)
  if "b" in mode:
    return open(path, mode)
  return open(path, mode, encoding="utf-8")


def glob(pattern):
  if is_url(pattern):
    return _gfile().glob(pattern)
  return sorted(local_glob.glob(pattern))


def glob_escape(path):
  """`path` with glob's special characters escaped, to match it literally."""
  return local_glob.escape(path)


def exists(path):
  return _gfile().exists(path) if is_url(path) else os.path.exists(path)


def isdir(path):
  return _gfile().isdir(path) if is_url(path) else os.path.isdir(path)


def size(path):
  return _gfile().stat(path).length if is_url(path) else os.path.getsize(path)


def makedirs(path):
  """Makes `path` and its missing parents; a local symlink is followed, so
  that a dangling one's target is made, as for files."""
  if is_url(path):
    _gfile().makedirs(path)
  else:
    os.makedirs(os.path.realpath(path), exist_ok=True)


def rename(source, target):
  """Renames, replacing `target`: how finished files take their final name."""
  if is_url(source):
    _gfile().rename(source, target, overwrite=True)
  else:
    os.replace(source, target)


def remove(path):
  if is_url(path):
    _gfile().remove(path)
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


def check_replaceable(path):
  """Raises ValueError unless `path` is a regular file or absent: devices,
  FIFOs, sockets and directories are never replaced by a rename."""
  kind = kind_of_file(path)
  if kind is not None:
    raise ValueError(f"{path} is {kind}, not a regular file; refusing to "
                     f"replace it")


def temporary_name(path):
  """A fresh `<path>.tmp-<32 hex>` name next to `path`."""
  return f"{path}.tmp-{uuid.uuid4().hex}"


def _try_lock(descriptor):
  """Takes flock(LOCK_EX) without waiting; False when another holds it."""
  try:
    fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return True
  except BlockingIOError:
    return False


def _is_held(path):
  """Whether a live writer holds the temporary at `path` (a file or a
  directory) with flock; a symlink is not followed."""
  try:  # O_NONBLOCK: opening a FIFO must not wait for a writer
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
  except OSError:
    return False
  try:
    return not _try_lock(descriptor)
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
  if not owned or is_url(path):
    yield
    return
  made = not os.path.isdir(path)
  makedirs(path)
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
    if not _try_lock(descriptor):
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
      kind_of_file(lock_path) or "not a regular file"
  return ValueError(f"{flag}={path}: {lock_path} is {kind}, not the run lock "
                    f"file bert_tf keeps there; refusing to use it (remove "
                    f"it if nothing needs it)")


def remove_stale_temporaries(directory, final_name=".+"):
  """Removes the temporaries of killed runs in `directory`.

  Args:
    directory: a local directory (URLs are left alone: no locks there).
    final_name: a regular expression for the final names whose temporaries
      to remove; a temporary is `<final name>.tmp-<32 hex>`, and files that
      extend it (`<temporary>.index`, ...) belong to it.

  Returns:
    The paths removed. Temporaries a live writer holds are kept, and so is
    whatever bears such a name but is not a regular file or a directory
    (a symlink, a FIFO): temporaries are never those, so it is not ours.
  """
  if is_url(directory) or not os.path.isdir(directory):
    return []
  pattern = re.compile(f"(?:{final_name}){_TEMPORARY}")
  groups = {}
  for name in os.listdir(directory):
    match = pattern.match(name)
    if match:
      groups.setdefault(match.group(0), []).append(name)
  removed = []
  for stem, names in groups.items():
    stem_path = os.path.join(directory, stem)
    if _lstat_kind(stem_path) == "other" or _is_held(stem_path):
      continue
    for name in names:
      path = os.path.join(directory, name)
      kind = _lstat_kind(path)
      if kind == "directory":
        shutil.rmtree(path, ignore_errors=True)
      elif kind == "file":
        with contextlib.suppress(FileNotFoundError):
          os.remove(path)
      if kind in ("directory", "file"):
        removed.append(path)
  return removed


def _lstat_kind(path):
  """"file", "directory", "other" (a symlink, FIFO, ...) or None (nothing
  there) for `path` itself, no symlink followed."""
  try:
    mode = os.lstat(path).st_mode
  except FileNotFoundError:
    return None
  if stat.S_ISREG(mode):
    return "file"
  return "directory" if stat.S_ISDIR(mode) else "other"


@contextlib.contextmanager
def held_temporary(path, directory=False):
  """Reserves a temporary name for `path` while the block runs.

  The temporary (an empty file, or a directory with directory=True) is
  created and held with flock, so that remove_stale_temporaries in other
  processes leaves it alone; the block writes it, or files that extend its
  name, and renames them into place. Whatever is left when the block ends
  is removed.

  The temporaries of `path` that killed runs left are removed first (see
  remove_stale_temporaries). Running out of space in the block raises
  DiskFullError naming `path`.

  Yields:
    The temporary's path.
  """
  remove_stale_temporaries(os.path.dirname(path) or ".",
                           re.escape(os.path.basename(path)))
  temporary = temporary_name(path)
  descriptor = None
  try:
    with naming_full_disk(path):
      if not is_url(path):
        if directory:
          os.mkdir(temporary)
          descriptor = os.open(temporary, os.O_RDONLY)
        else:
          descriptor = os.open(temporary,
                               os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        _try_lock(descriptor)
      yield temporary
  finally:
    if descriptor is not None:
      os.close(descriptor)
    _remove_leftovers(temporary)


def _remove_leftovers(temporary):
  for path in glob(f"{glob_escape(temporary)}*"):
    if isdir(path):
      if is_url(path):
        _gfile().rmtree(path)
      else:
        shutil.rmtree(path, ignore_errors=True)
    else:
      with contextlib.suppress(FileNotFoundError):
        remove(path)


class AtomicFiles:
  """Files that appear at their paths together, and only when all are
  complete.

  Entering checks every path (a regular file or nothing; a symlink is
  written through to its target), creates missing parent directories and
  opens a held temporary for each (removing the stale ones of killed
  runs). Leaving normally renames every temporary over its path, each
  taking the permissions of the file it replaces; leaving by an exception
  removes them all, so the files that were there stay as they were
  (running out of space raises DiskFullError naming the set).

  Files of the same set that this one does not hold (`replaced`: an
  earlier run's results file, where this run's predictions cannot be
  scored) are removed when the set is renamed into place, so that no
  earlier file stands beside the new set as if it belonged to it.

  Example:
    >>> with AtomicFiles(["a.tfrecord", "b.tfrecord"], "wb") as (a, b):
    ...   a.write(...)
  """

  def __init__(self, paths, mode="w", replaced=()):
    self.paths = [resolved(path) for path in paths]
    self.mode = mode
    self.replaced = [resolved(path) for path in replaced]
    self.removed = []  # of `replaced`, those there were, once renamed
    self._stack = contextlib.ExitStack()
    self._files = []
    self._temporaries = []

  def __enter__(self):
    repeated = sorted({path for path in self.paths
                       if self.paths.count(path) > 1})
    if repeated:
      raise ValueError(f"{repeated[0]} is given more than once as an output")
    for path in self.replaced:
      check_replaceable(path)
    for path in self.paths:
      check_replaceable(path)
      directory = os.path.dirname(path)
      if directory:
        makedirs(directory)
    with self._stack as stack:
      for path in self.paths:
        temporary = stack.enter_context(held_temporary(path))
        self._temporaries.append(temporary)
        self._files.append(stack.enter_context(open_file(temporary,
                                                         self.mode)))
      self._stack = stack.pop_all()
    return list(self._files)

  @property
  def temporaries(self):
    """The held temporaries, in the order of the paths, once entered: a
    caller may have other processes write them instead."""
    return list(self._temporaries)

  def __exit__(self, exc_type, exc_value, traceback):
    written = self.paths[0] if len(self.paths) == 1 else \
        f"{self.paths[0]} (one of a set of {len(self.paths)} files)"
    with self._stack, naming_full_disk(written):
      if exc_type is not None and is_disk_full(exc_value):
        raise exc_value
      if exc_type is None:
        for file in self._files:
          file.close()
        replace_all(self._temporaries, self.paths)
        for path in self.replaced:
          if exists(path):
            remove(path)
            self.removed.append(path)
    return False


def replace_all(temporaries, paths):
  """Renames each complete temporary over its path, once every path is
  checked replaceable; each takes the permissions of the file it replaces."""
  for path in paths:
    check_replaceable(path)
  for temporary, path in zip(temporaries, paths):
    _keep_permissions(path, temporary)
    rename(temporary, path)


def _keep_permissions(path, temporary):
  if not is_url(path) and os.path.exists(path):
    os.chmod(temporary, stat.S_IMODE(os.stat(path).st_mode))


@contextlib.contextmanager
def atomic_write(path, mode="w"):
  """A file that appears at `path` only when complete (see AtomicFiles).

  If the block raises, whatever was at `path` stays as it was. A symlink at
  `path` is written through to its target; a directory, device, FIFO or
  socket there is refused with ValueError.
  """
  with AtomicFiles([path], mode) as (file,):
    yield file


def check_input_file(flag_name, path):
  """Raises ValueError, naming the flag, unless `path` is an existing file
  (a directory or a FIFO is not)."""
  kind = kind_of_file(path)
  if kind is not None:
    raise ValueError(f"{flag_name}={path} is {kind}, not a file")
  if not exists(path):
    raise ValueError(f"{flag_name}={path} does not exist")


_BYTE_ORDER_MARK = b"\xef\xbb\xbf"


def utf8_lines(path):
  """(number from 1, line) of a text file's lines, split at "\\n" only, as
  readline splits them, each decoded as UTF-8; a UTF-8 byte order mark
  that starts the file (as editors on Windows write one) is not text.

  Raises:
    ValueError: a line that is not UTF-8, naming the file and line.
  """
  for number, _, line in utf8_lines_with_bytes(path):
    yield number, line


def utf8_lines_with_bytes(path):
  """(number from 1, the line's bytes, the line) as utf8_lines gives
  them, for a reader that counts bytes (the bytes keep a byte order mark)."""
  with open_file(path, "rb") as reader:
    for number, raw_line in enumerate(reader, start=1):
      text = raw_line.removeprefix(_BYTE_ORDER_MARK) if number == 1 \
          else raw_line
      try:
        yield number, raw_line, text.decode("utf-8")
      except UnicodeDecodeError as error:
        raise ValueError(f"{path}:{number}: not UTF-8 text "
                         f"({error.reason})") from None


def utf8_text(path):
  """A text file's whole text, as utf8_lines reads its lines (a byte
  order mark that starts it is not text); bytes that are not UTF-8 name
  the file and line."""
  with open_file(path, "rb") as reader:
    data = reader.read()
  try:
    return data.decode("utf-8-sig")
  except UnicodeDecodeError as error:
    line = data[:error.start].count(b"\n") + 1
    raise ValueError(f"{path}: line {line} is not UTF-8 text "
                     f"({error.reason})") from None


def first_undecodable_line(path):
  """The number of the first line of a file that is not UTF-8 ("?" if
  none), for an error that names it."""
  with open_file(path, "rb") as reader:
    for number, line in enumerate(reader, start=1):
      try:
        line.decode("utf-8")
      except UnicodeDecodeError:
        return number
  return "?"


def input_files(patterns, flag_name="--input_file"):
  """The files comma-separated globs name, each glob's matches sorted.

  Args:
    patterns: "a.txt,dir/*.txt" or a list of globs, as the original's flags.
    flag_name: the flag named in errors.

  Raises:
    ValueError: a glob matches nothing, or a matched file is empty or not a
      regular file.
  """
  if isinstance(patterns, str):
    patterns = patterns.split(",")
  files = []
  for pattern in patterns:
    matched = glob(pattern)
    if not matched:
      raise ValueError(f"{flag_name}: {pattern} matches no file")
    for path in matched:
      kind = kind_of_file(path)
      if kind is not None:
        raise ValueError(f"{flag_name}: {path} is {kind}, not a file")
      if size(path) == 0:
        raise ValueError(f"{flag_name}: {path} is empty")
    files.extend(matched)
  return files
