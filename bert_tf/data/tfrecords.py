"""TFRecord files without TensorFlow: written atomically and round-robin,
read back with every checksum checked and every fault named.

The TFRecord framing is small and fixed (length, masked CRC32C of the length,
data, masked CRC32C of the data); handling it here keeps create_pretraining_
data free of a TensorFlow import, which costs several seconds per process,
and lets a corrupt, truncated or mistaken file be reported by name, record
and byte offset, which TensorFlow's reader does not do.
"""

import contextlib
import struct

import google_crc32c

from bert_tf.files import atomic_outputs, storage

_CRC_MASK_DELTA = 0xA282EAD8
_HEADER_BYTES = 12  # uint64 length, uint32 masked CRC of the length
_FOOTER_BYTES = 4  # uint32 masked CRC of the data


class CorruptRecordError(ValueError):
  """A TFRecord file that is truncated, corrupt or not a TFRecord file."""


def _masked_crc32c(data):
  crc = google_crc32c.value(data)
  return (((crc >> 15) | (crc << 17)) + _CRC_MASK_DELTA) & 0xFFFFFFFF


def tfrecord_frame(record):
  """One record in the TFRecord file format."""
  length = struct.pack("<Q", len(record))
  return b"".join((length, struct.pack("<I", _masked_crc32c(length)), record,
                   struct.pack("<I", _masked_crc32c(record))))


def _header_is_valid(header):
  return (len(header) == _HEADER_BYTES and
          struct.unpack("<I", header[8:])[0] == _masked_crc32c(header[:8]))


def read_records(path):
  """The records of a TFRecord file, in order, each checksum checked.

  Raises:
    CorruptRecordError: naming the file, the record and its byte offset.
  """
  offset = index = 0
  with storage.open_file(path, "rb") as reader:
    while True:
      header = reader.read(_HEADER_BYTES)
      if not header:
        return
      where = f"{path}: record {index} (byte {offset})"
      if len(header) < _HEADER_BYTES:
        raise CorruptRecordError(f"{where}: truncated, the file ends inside "
                                 f"the record's length")
      if not _header_is_valid(header):
        if index == 0:
          raise CorruptRecordError(
              f"{path}: not a TFRecord file{_what_it_looks_like(header)}")
        raise CorruptRecordError(f"{where}: corrupt, the length's checksum "
                                 f"does not match")
      length = struct.unpack("<Q", header[:8])[0]
      body = reader.read(length + _FOOTER_BYTES)
      missing = length + _FOOTER_BYTES - len(body)
      if missing:
        raise CorruptRecordError(f"{where}: truncated, the file ends "
                                 f"{missing} bytes before the record does")
      data = body[:length]
      if struct.unpack("<I", body[length:])[0] != _masked_crc32c(data):
        raise CorruptRecordError(f"{where}: corrupt, the data's checksum "
                                 f"does not match")
      yield data
      offset += _HEADER_BYTES + length + _FOOTER_BYTES
      index += 1


def count_records(path):
  """How many records a file holds, reading (and checking) all of them."""
  return sum(1 for _ in read_records(path))


def is_tfrecord_file(path):
  """Whether the file begins with a valid TFRecord header (a text file does
  so by chance with probability 2**-32)."""
  with storage.open_file(path, "rb") as reader:
    return _header_is_valid(reader.read(_HEADER_BYTES))


def _what_it_looks_like(head):
  """What a file that is not a TFRecord seems to be, from its first bytes."""
  if head.startswith(b"\x1f\x8b"):
    return " (it is gzip-compressed; decompress it first)"
  try:
    text = head.decode("utf-8")
  except UnicodeDecodeError:
    return ""
  if all(char.isprintable() or char.isspace() for char in text):
    return f" (it begins like text: {text!r})"
  return ""


class RoundRobinWriter:
  """Writes records to several TFRecord files in turn, as the original does.

  A context manager: the files appear under their names together, and only
  when the block ends normally (atomic_outputs.AtomicFiles), so an
  interrupted run leaves no truncated TFRecord and does not touch files that already
  existed. atomic=False writes the paths directly: temporaries that a
  caller staged.

  Example:
    >>> with RoundRobinWriter(["a.tfrecord", "b.tfrecord"]) as writer:
    ...   for record in records:  # serialized tf.train.Example bytes
    ...     writer.write(record)
  """

  def __init__(self, output_files, atomic=True):
    self.output_files = list(output_files)
    self.atomic = atomic
    self._stack = contextlib.ExitStack()
    self._files = []
    self._next = 0
    self.written = 0

  def __enter__(self):
    with self._stack as stack:
      if self.atomic:
        self._files = stack.enter_context(
            atomic_outputs.AtomicFiles(self.output_files, "wb"))
      else:
        self._files = [stack.enter_context(storage.open_file(path, "wb"))
                       for path in self.output_files]
      self._stack = stack.pop_all()
    return self

  def write(self, record):
    """Appends one serialized record (bytes)."""
    self._files[self._next].write(tfrecord_frame(record))
    self._next = (self._next + 1) % len(self._files)
    self.written += 1

  def __exit__(self, *exc_info):
    return self._stack.__exit__(*exc_info)
