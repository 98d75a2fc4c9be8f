"""Files by local path or by URL (gs://, hdfs://, ...), TensorFlow only for URLs.

The original read everything through tf.gfile, which handles cloud storage
but costs a TensorFlow import; tools such as create_pretraining_data start in
a fraction of a second on local files and still accept URLs.
"""

import contextlib
import glob as local_glob
import os
import uuid


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


def exists(path):
  return _gfile().exists(path) if is_url(path) else os.path.exists(path)


def size(path):
  return _gfile().stat(path).length if is_url(path) else os.path.getsize(path)


def makedirs(path):
  if is_url(path):
    _gfile().makedirs(path)
  else:
    os.makedirs(path, exist_ok=True)


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


@contextlib.contextmanager
def atomic_write(path, mode="w"):
  """A file that appears at `path` only when complete.

  It is written under a temporary name and renamed over `path` when the
  block ends normally; if the block raises, the temporary file is removed
  and whatever was at `path` stays as it was. Missing parent directories
  are created.
  """
  directory = path.rpartition("/")[0]
  if directory:
    makedirs(directory)
  temporary = f"{path}.tmp-{uuid.uuid4().hex}"
  try:
    with open_file(temporary, mode) as file:
      yield file
    rename(temporary, path)
  except BaseException:
    if exists(temporary):
      remove(temporary)
    raise


def input_files(patterns, flag_name="--input_file"):
  """The files comma-separated globs name, each glob's matches sorted.

  Args:
    patterns: "a.txt,dir/*.txt" or a list of globs, as the original's flags.
    flag_name: the flag named in errors.

  Raises:
    ValueError: a glob matches nothing, or a matched file is empty.
  """
  if isinstance(patterns, str):
    patterns = patterns.split(",")
  files = []
  for pattern in patterns:
    matched = glob(pattern)
    if not matched:
      raise ValueError(f"{flag_name}: {pattern} matches no file")
    for path in matched:
      if size(path) == 0:
        raise ValueError(f"{flag_name}: {path} is empty")
    files.extend(matched)
  return files
