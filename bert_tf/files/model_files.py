"""The files of a model directory, checked before any is opened.

A model directory comes from elsewhere (a download, a clone, a colleague's
disk), so the names in it are not trusted. A FIFO or a device in it would
hang or flood its reader, and a name (a shard in model.safetensors.index.json)
or a symlink leading out of it would read the user's other files, which a
conversion then copies into its output. So every file read from a model
directory is a regular file that resolves inside it. A Hugging Face cache
snapshot links each file into its model's blobs/, which counts as inside:
a folder in <cache>/models--<name>/snapshots/<revision>/ (<name> is
<org>--<repo>, or <repo> alone) whose models--<name>/ has a blobs/ folder
may read that blobs/ too, and nothing else outside it (not a sibling
snapshot: transformers' snapshots link only into blobs/). Datasets' and
spaces' caches (datasets--, spaces--) hold no models.
"""

import os

from bert_tf.files import storage

# The folder of a model in transformers' cache: models--<org>--<repo>.
_CACHE_PREFIX = "models--"


def _cache_blobs(real):
  """The blobs/ folder of the Hugging Face cache model whose snapshot holds
  `real` (a resolved path, snapshots/<revision>/ or a folder inside it),
  else None."""
  path = real
  while os.path.dirname(path) != path:
    parent = os.path.dirname(path)
    model = os.path.dirname(parent)
    if os.path.basename(parent) == "snapshots":
      name, blobs = os.path.basename(model), os.path.join(model, "blobs")
      if name.startswith(_CACHE_PREFIX) and name != _CACHE_PREFIX and \
          os.path.isdir(blobs):
        return blobs
      return None
    path = parent
  return None


def _where(directory, name, listed_in):
  return f"{listed_in}: {name!r}" if listed_in else \
      os.path.join(directory, name)


def _check_name(directory, name, where, what="file"):
  """Raises ValueError for a name that is absolute or leads out of the
  directory."""
  if os.path.isabs(name) or os.path.normpath(name).split(os.sep)[0] == "..":
    raise ValueError(f"{where} is not a {what} inside {directory}; a model "
                     f"directory's files are read from it alone")


def _check_resolves_inside(directory, name, where, blobs_too=True):
  """Raises ValueError where the path resolves (through any symlink)
  outside the directory (or, blobs_too, its cache model's blobs/: see
  _cache_blobs)."""
  real = os.path.realpath(directory)
  resolved = os.path.realpath(os.path.join(directory, name))
  roots = [real]
  if blobs_too:
    roots.append(_cache_blobs(real))
  if not any(root and resolved.startswith(root + os.sep) for root in roots):
    raise ValueError(f"{where} resolves to {resolved}, outside "
                     f"{directory}; a model directory's files are read from "
                     f"it alone")


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
  that is absolute, leads out of the directory, resolves outside it or is
  there but no folder (a FIFO, a file) is refused in one line. "" and "."
  are the directory itself. Its files are read with model_file."""
  where = _where(directory, name, listed_in)
  _check_name(directory, name, where, "folder")
  if os.path.normpath(name) == os.curdir:
    return directory
  path = os.path.join(directory, name)
  kind = storage.kind_of_file(path)
  if kind != "a directory" and (kind or os.path.exists(path)):
    raise ValueError(f"{where} is {kind or 'a file'}, not a folder")
  _check_resolves_inside(directory, name, where, blobs_too=False)
  return path


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
