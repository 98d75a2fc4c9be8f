"""Outputs written whole or not at all.

Every output is written under a temporary name next to it,
`<name>.tmp-<32 hex digits>`, and renamed over its final name when complete;
a set of outputs is replaced together. While its writer runs, a local
temporary is held with flock() (run_lock); temporaries that nobody holds
were left by a killed run and are removed the next time that output (or,
for checkpoints and exports, that directory) is written.
"""

import contextlib
import os
import re
import shutil
import stat
import uuid

from bert_tf.files import run_lock, storage


_TEMPORARY = r"\.tmp-[0-9a-f]{32}"


def check_replaceable(path):
  """Raises ValueError unless `path` is a regular file or absent: devices,
  FIFOs, sockets and directories are never replaced by a rename."""
  kind = storage.kind_of_file(path)
  if kind is not None:
    raise ValueError(f"{path} is {kind}, not a regular file; refusing to "
                     f"replace it")


def temporary_name(path):
  """A fresh `<path>.tmp-<32 hex>` name next to `path`."""
  return f"{path}.tmp-{uuid.uuid4().hex}"


def remove_stale_temporaries(directory, final_name=".+"):
  """Removes the temporaries of killed runs in `directory`.

  Args:
    directory: a local directory (URLs are left alone: no locks there).
    final_name: a regular expression for the final names whose temporaries
      to remove; a temporary is `<final name>.tmp-<32 hex>`, and
      files that extend it (`<temporary>.index`, ...) belong to it.

  Returns:
    The paths removed. Temporaries a live writer holds are kept, and so is
    whatever bears such a name but is not a regular file or a directory
    (a symlink, a FIFO): temporaries are never those, so it is not ours.
  """
  if storage.is_url(directory) or not os.path.isdir(directory):
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
    if storage.lstat_kind(stem_path) == "other" or run_lock.is_held(stem_path):
      continue
    for name in names:
      path = os.path.join(directory, name)
      kind = storage.lstat_kind(path)
      if kind == "directory":
        shutil.rmtree(path, ignore_errors=True)
      elif kind == "file":
        with contextlib.suppress(FileNotFoundError):
          os.remove(path)
      if kind in ("directory", "file"):
        removed.append(path)
  return removed


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
  storage.DiskFullError naming `path`.

  Yields:
    The temporary's path.
  """
  remove_stale_temporaries(os.path.dirname(path) or ".",
                           re.escape(os.path.basename(path)))
  temporary = temporary_name(path)
  descriptor = None
  try:
    with storage.naming_full_disk(path):
      if not storage.is_url(path):
        if directory:
          os.mkdir(temporary)
          descriptor = os.open(temporary, os.O_RDONLY)
        else:
          descriptor = os.open(temporary,
                               os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        run_lock.try_lock(descriptor)
      yield temporary
  finally:
    if descriptor is not None:
      os.close(descriptor)
    remove_temporary(temporary)


def remove_temporary(temporary):
  """Removes a temporary and whatever extends its name (a writer's own
  temporaries, `<temporary>.index`, ...)."""
  for path in storage.glob(f"{storage.glob_escape(temporary)}*"):
    if storage.isdir(path):
      if storage.is_url(path):
        storage.gfile().rmtree(path)
      else:
        shutil.rmtree(path, ignore_errors=True)
    else:
      with contextlib.suppress(FileNotFoundError):
        storage.remove(path)


class AtomicFiles:
  """Files that appear at their paths together, and only when all are
  complete.

  Entering checks every path (a regular file or nothing; a symlink is
  written through to its target), creates missing parent directories and
  opens a held temporary for each (removing the stale ones of killed
  runs). Leaving normally renames every temporary over its path, each
  taking the permissions of the file it replaces; leaving by an exception
  removes them all, so the files that were there stay as they were
  (running out of space raises storage.DiskFullError naming the set).

  Files of the same set that this one does not hold (`replaced`: an
  earlier run's results file, where this run's predictions cannot be
  scored) are removed when the set is renamed into place, so that no
  earlier file stands beside the new set as if it belonged to it.

  Example:
    >>> with AtomicFiles(["a.tfrecord", "b.tfrecord"], "wb") as (a, b):
    ...   a.write(...)
  """

  def __init__(self, paths, mode="w", replaced=()):
    self.paths = [storage.resolved(path) for path in paths]
    self.mode = mode
    self.replaced = [storage.resolved(path) for path in replaced]
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
        storage.makedirs(directory)
    with self._stack as stack:
      for path in self.paths:
        temporary = stack.enter_context(held_temporary(path))
        self._temporaries.append(temporary)
        self._files.append(stack.enter_context(storage.open_file(temporary,
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
    with self._stack, storage.naming_full_disk(written):
      if exc_type is not None and storage.is_disk_full(exc_value):
        raise exc_value
      if exc_type is None:
        for file in self._files:
          file.close()
        replace_all(self._temporaries, self.paths)
        for path in self.replaced:
          if storage.exists(path):
            storage.remove(path)
            self.removed.append(path)
    return False


def replace_all(temporaries, paths):
  """Renames each complete temporary over its path, once every path is
  checked replaceable; each takes the permissions of the file it replaces."""
  for path in paths:
    check_replaceable(path)
  for temporary, path in zip(temporaries, paths):
    _keep_permissions(path, temporary)
    storage.rename(temporary, path)


def _keep_permissions(path, temporary):
  if not storage.is_url(path) and os.path.exists(path):
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
