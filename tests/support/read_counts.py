"""How many times a program reads each file of a directory: Python's opens
for reading (the audit event "open", which builtins.open, io.open and
os.open raise), a safetensors file's header and each of its tensors
(safetensors.safe_open), and a TF1 checkpoint's reader and each of its
tensors (tf.train.load_checkpoint).

In a test: `with counted_reads(directory) as counts: ...`, then
counts_over_one(counts). As a program, for a run script:
`read_counts.py <directory> <script> [flags...]` prints the counts as JSON,
the last line of stderr.
"""

import collections
import contextlib
import json
import os
import runpy
import sys

_COUNTERS = []  # the counts being taken: (directory, Counter)
_WRITING = os.O_WRONLY | os.O_RDWR


def _audit(event, arguments):
  if event != "open" or not _COUNTERS:
    return
  path, mode, flags = arguments
  if not isinstance(path, (str, bytes, os.PathLike)):
    return
  if (mode is not None and set("wax+") & set(mode)) or (
      mode is None and flags & _WRITING):
    return
  _count(("open", os.fsdecode(path)))


def _count(key):
  path = os.path.realpath(key[1])
  for directory, counts in _COUNTERS:
    if path.startswith(directory + os.sep):
      counts[(key[0], path, *key[2:])] += 1


sys.addaudithook(_audit)


class _CountedSafeOpen:
  """safetensors.safe_open, its header and tensor reads counted."""

  def __init__(self, real, path, *args, **kwargs):
    self._path = os.fsdecode(path)
    self._file = real(path, *args, **kwargs)

  def __enter__(self):
    self._file.__enter__()
    return self

  def __exit__(self, *details):
    return self._file.__exit__(*details)

  def keys(self):
    _count(("safetensors header", self._path))
    return self._file.keys()

  def get_slice(self, name):
    return self._file.get_slice(name)

  def get_tensor(self, name):
    _count(("safetensors tensor", self._path, name))
    return self._file.get_tensor(name)


class _CountedReader:
  """A TF1 checkpoint's reader, its tensor reads counted."""

  def __init__(self, reader, prefix):
    self._reader, self._prefix = reader, prefix

  def __getattr__(self, name):
    return getattr(self._reader, name)

  def get_tensor(self, name):
    _count(("checkpoint tensor", self._prefix, name))
    return self._reader.get_tensor(name)


@contextlib.contextmanager
def counted_reads(directory):
  """Counts the reads of the files under `directory` while the block runs:
  a Counter of (what, path, [tensor]) keys."""
  import safetensors  # pylint: disable=import-outside-toplevel
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  counts = collections.Counter()
  real_open, real_load = safetensors.safe_open, tf.train.load_checkpoint

  def load_checkpoint(prefix):
    _count(("checkpoint reader", prefix))
    return _CountedReader(real_load(prefix), prefix)

  safetensors.safe_open = lambda path, *args, **kwargs: _CountedSafeOpen(
      real_open, path, *args, **kwargs)
  tf.train.load_checkpoint = load_checkpoint
  _COUNTERS.append((os.path.realpath(str(directory)), counts))
  try:
    yield counts
  finally:
    _COUNTERS.pop()
    safetensors.safe_open, tf.train.load_checkpoint = real_open, real_load


def counts_over_one(counts):
  """The reads made more than once, as 'what path [tensor]: N' lines."""
  return sorted(f"{' '.join(map(str, key))}: {count}"
                for key, count in counts.items() if count > 1)


if __name__ == "__main__":
  _directory, _script, *_flags = sys.argv[1:]
  sys.argv = [_script, *_flags]
  sys.path.insert(0, os.path.dirname(os.path.abspath(_script)))
  with counted_reads(_directory) as _counts:
    try:
      runpy.run_path(_script, run_name="__main__")
    except SystemExit as _exit:
      if _exit.code:
        raise
    finally:
      print(json.dumps(counts_over_one(_counts)), file=sys.stderr)
