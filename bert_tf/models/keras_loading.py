"""The .keras file that keras.saving.load_model is loading on this thread,
found in its loader's frames (keras_load): where it is, its weights file's
size, its top-level config, and model.weights.h5 as a file h5py reads,
whose metadata is read without reading the rest of the archive."""

import io
import os
import struct
import sys
import zipfile
from typing import NamedTuple

import h5py

WEIGHTS_FILE = "model.weights.h5"
WEIGHTS_FILES = (WEIGHTS_FILE, "model.weights.npz")

# Keras' modules that load a model's file, and the functions among them
# that hold it open (the zip, the folder, the legacy .h5 file).
_KERAS_LOADERS = ("keras.src.saving.saving_lib",
                  "keras.src.legacy.saving.legacy_h5_format")

# The most a compressed weights file may expand (as Keras' own guard): no
# more weights are read into memory than 100 times the bytes stored.
_MAX_EXPANSION = 100

# A ZIP local file header: its size, and where the lengths of the name and
# of the extra field that come before the member's data are.
_ZIP_HEADER = struct.Struct("<4s22xHH")
_ZIP_HEADER_SIGNATURE = b"PK\x03\x04"


class KerasLoad(NamedTuple):
  """The keras.saving.load_model running on this thread.

  where: the file, for messages.
  weights_bytes: its weights file's size (None: it has none).
  root_config: the file's top-level config (None: unknown).
  h5_file: a callable giving model.weights.h5 as a file h5py reads (None:
    the file's weights are in another layout).
  """
  where: str
  weights_bytes: object
  root_config: object
  h5_file: object


def keras_load():
  """The KerasLoad of the keras.saving.load_model running on this thread,
  from its loader's frames; None outside one."""
  root_config = None
  frame = sys._getframe(1)  # pylint: disable=protected-access
  while frame is not None:
    if frame.f_globals.get("__name__") in _KERAS_LOADERS:
      local = frame.f_locals
      if root_config is None and isinstance(local.get("config_dict"), dict):
        root_config = local["config_dict"]
      loader = frame.f_code.co_name
      if loader == "_load_model_from_fileobj" and isinstance(
          local.get("zf"), zipfile.ZipFile):
        return _zip_load(local["zf"], root_config)
      if loader == "_load_model_from_dir" and "dirpath" in local:
        return _folder_load(str(local["dirpath"]), root_config)
      if loader == "load_model_from_hdf5" and isinstance(local.get("f"),
                                                         h5py.File):
        return KerasLoad(local["f"].filename, local["f"].id.get_filesize(),
                     None, None)
    frame = frame.f_back
  return None


def _zip_load(archive, root_config):
  """The KerasLoad of a .keras file open as `archive`."""
  where = archive.filename or "the .keras file"
  names = set(archive.namelist())
  member = next((name for name in WEIGHTS_FILES if name in names), None)
  if member is None:
    return KerasLoad(where, None, root_config, None)
  info = archive.getinfo(member)
  h5_file = None
  if member == WEIGHTS_FILE:
    h5_file = lambda: _member_file(archive, info)
  return KerasLoad(where, info.file_size, root_config, h5_file)


def _folder_load(folder, root_config):
  """The KerasLoad of an unzipped .keras folder."""
  for name in WEIGHTS_FILES:
    path = os.path.join(folder, name)
    if os.path.isfile(path):
      h5_file = None
      if name == WEIGHTS_FILE:
        h5_file = lambda: path
      return KerasLoad(folder, os.path.getsize(path), root_config, h5_file)
  return KerasLoad(folder, None, root_config, None)


def _member_file(archive, info):
  """A zip member as a file h5py can read: where it is stored as it is (as
  Keras writes it), a view of the archive's bytes, so that reading its
  metadata reads nothing else; a compressed member read whole, as Keras
  reads it next."""
  if info.compress_type != zipfile.ZIP_STORED:
    if info.file_size > _MAX_EXPANSION * info.compress_size:
      raise ValueError(
          f"{archive.filename}: {info.filename} is {info.file_size:,} bytes "
          f"compressed into {info.compress_size:,}; bert_tf reads weights "
          f"compressed at most {_MAX_EXPANSION}-fold")
    return io.BytesIO(archive.read(info))
  archive.fp.seek(info.header_offset)
  header = archive.fp.read(_ZIP_HEADER.size)
  if len(header) != _ZIP_HEADER.size or not header.startswith(
      _ZIP_HEADER_SIGNATURE):
    raise ValueError(f"{archive.filename}: {info.filename} has no ZIP header")
  name_length, extra_length = _ZIP_HEADER.unpack(header)[1:]
  start = info.header_offset + _ZIP_HEADER.size + name_length + extra_length
  return _Slice(archive.fp, start, info.file_size)


class _Slice(io.RawIOBase):
  """Bytes [start, start + size) of a seekable binary file, read as a file
  of their own."""

  def __init__(self, file, start, size):
    super().__init__()
    self._file = file
    self._start = start
    self._size = size
    self._position = 0

  def readable(self):
    return True

  def seekable(self):
    return True

  def tell(self):
    return self._position

  def seek(self, offset, whence=io.SEEK_SET):
    base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position,
            io.SEEK_END: self._size}[whence]
    self._position = max(0, base + offset)
    return self._position

  def readinto(self, buffer):
    count = max(0, min(len(buffer), self._size - self._position))
    self._file.seek(self._start + self._position)
    data = self._file.read(count)
    buffer[:len(data)] = data
    self._position += len(data)
    return len(data)
