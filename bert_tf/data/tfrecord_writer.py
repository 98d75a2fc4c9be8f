"""Writing TFRecord files without TensorFlow: atomically, round-robin.

The TFRecord framing is small and fixed (length, masked CRC32C of the length,
data, masked CRC32C of the data); writing it here keeps create_pretraining_
data free of a TensorFlow import, which costs several seconds per process.
"""

import contextlib
import struct

import google_crc32c

from bert_tf import file_io

_CRC_MASK_DELTA = 0xA282EAD8


def _masked_crc32c(data):
  crc = google_crc32c.value(data)
  return (((crc >> 15) | (crc << 17)) + _CRC_MASK_DELTA) & 0xFFFFFFFF


def tfrecord_frame(record):
  """One record in the TFRecord file format."""
  length = struct.pack("<Q", len(record))
  return b"".join((length, struct.pack("<I", _masked_crc32c(length)), record,
                   struct.pack("<I", _masked_crc32c(record))))


class RoundRobinWriter:
  """Writes records to several TFRecord files in turn, as the original does.

  A context manager: the files appear under their names only when the block
  ends normally (file_io.atomic_write), so an interrupted run leaves no
  truncated TFRecord and does not touch files that already existed.

  Example:
    >>> with RoundRobinWriter(["a.tfrecord", "b.tfrecord"]) as writer:
    ...   for record in records:  # serialized tf.train.Example bytes
    ...     writer.write(record)
  """

  def __init__(self, output_files):
    self.output_files = list(output_files)
    self._stack = contextlib.ExitStack()
    self._files = []
    self._next = 0
    self.written = 0

  def __enter__(self):
    with self._stack as stack:
      self._files = [stack.enter_context(file_io.atomic_write(path, "wb"))
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
