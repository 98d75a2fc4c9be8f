"""The files of a model directory, checked before any is opened.

A model directory comes from elsewhere (a download, a clone, a colleague's
disk), so the names in it are not trusted. A FIFO or a device in it would
hang or flood its reader, and a name (a shard in model.safetensors.index.json)
or a symlink leading out of it would read the user's other files, which a
conversion then copies into its output. So every file read from a model
directory is a regular file that resolves inside it. A Hugging Face cache
snapshot (<model>/snapshots/<revision>/) links each file into its model's
blobs/, which counts as inside: the model's cache folder is the root.
"""

import os

from bert_tf.files import storage


def _root(directory):
  """The folder a directory's files must resolve into: the directory, or
  the model's cache folder where it is a cache snapshot or a folder inside
  one (a sentence-transformers module's, snapshots/<revision>/1_Pooling)."""
  real = os.path.realpath(directory)
  path = real
  while os.path.dirname(path) != path:
    parent = os.path.dirname(path)
    if os.path.basename(parent) == "snapshots":
      return os.path.dirname(parent)
    path = parent
  return real


def _where(directory, name, listed_in):
  return f"{listed_in}: {name!r}" if listed_in else \
      os.path.join(directory, name)


def _check_name(directory, name, where, what="file"):
  """Raises ValueError for a name that is absolute or leads out of the
  directory."""
  if os.path.isabs(name) or os.path.normpath(name).split(os.sep)[0] == "..":
    raise ValueError(f"{where} is not a {what} inside {directory}; a model "
                     f"directory's files are read from it alone")


def _check_resolves_inside(directory, name, where):
  """Raises ValueError where the path resolves (through any symlink)
  outside the directory's _root."""
  path = os.path.join(directory, name)
  if not os.path.realpath(path).startswith(_root(directory) + os.sep):
    raise ValueError(f"{where} resolves to {os.path.realpath(path)}, "
                     f"outside {directory}; a model directory's files are "
                     f"read from it alone")


def model_file(directory, name, listed_in=None):
  """The path of file `name` of a model directory, checked; None where the
  directory has nothing of that name.

  Args:
    directory: the model directory.
    name: a path relative to it, as a file of the directory names it.
    listed_in: the file that named `name` (an index of shards), for the
      message; None for the files a model directory has by convention.

  Raises:
    ValueError: one line naming the file (and where it was listed): a name
      that is absolute or leads out of the directory, a file that resolves
      outside it through a symlink, or one that is not a regular file.
  """
  where = _where(directory, name, listed_in)
  _check_name(directory, name, where)
  path = os.path.join(directory, name)
  if storage.is_url(path):
    return path if storage.exists(path) else None
  kind = storage.kind_of_file(path)
  if kind is None and not os.path.exists(path):
    if os.path.islink(path):
      raise ValueError(f"{where} is a symlink to nothing "
                       f"({os.readlink(path)})")
    return None
  if kind is not None:
    raise ValueError(f"{where} is {kind}, not a regular file")
  _check_resolves_inside(directory, name, where)
  return path


def model_folder(directory, name, listed_in):
  """The path of folder `name` of a model directory (a module's, as
  `listed_in` names it), checked as model_file checks a file's name: one
  that is absolute, leads out of the directory or resolves outside it is
  refused in one line. Its files are read with model_file."""
  where = _where(directory, name, listed_in)
  _check_name(directory, name, where, "folder")
  _check_resolves_inside(directory, name, where)
  return os.path.join(directory, name)


def required_model_file(directory, name, why):
  """model_file, where the directory must have it.

  Raises:
    FileNotFoundError: it is missing; `why` says what needs it.
  """
  path = model_file(directory, name)
  if path is None:
    raise FileNotFoundError(f"{os.path.join(directory, name)}: missing; "
                            f"{why}")
  return path
