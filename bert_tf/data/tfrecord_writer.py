"""Writing TFRecord files without TensorFlow: atomically, round-robin.

The TFRecord framing is small and fixed (length, masked CRC32C of the length,
data, masked CRC32C of the data); writing it here keeps create_pretraining_
data free of a TensorFlow import, which costs several seconds per process.
"""

import struct
import uuid

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

  Records go to temporary files that are renamed over the outputs only by
  commit(), so an interrupted run leaves no truncated TFRecord and does not
  touch files that already existed. Use as a context manager: leaving the
  block without commit() deletes the temporary files.

  Example:
    >>> with RoundRobinWriter(["a.tfrecord", "b.tfrecord"]) as writer:
    ...   for record in records:  # serialized tf.train.Example bytes
    ...     writer.write(record)
    ...   writer.commit()
  """

  def __init__(self, output_files):
    self.output_files = list(output_files)
    self._temporary = [f"{path}.tmp-{uuid.uuid4().hex}"
                       for path in self.output_files]
    self._files = []
    self._next = 0
    self.written = 0

  def __enter__(self):
    self._files = [file_io.open_file(path, "wb") for path in self._temporary]
    return self

  def write(self, record):
    """Appends one serialized record (bytes)."""
    self._files[self._next].write(tfrecord_frame(record))
    self._next = (self._next + 1) % len(self._files)
    self.written += 1

  def commit(self):
    """Closes the files and renames them to their final names."""
    self._close()
    for temporary, final in zip(self._temporary, self.output_files):
      file_io.rename(temporary, final)
    self._temporary = []

  def __exit__(self, *exc_info):
    self._close()
    for temporary in self._temporary:
      if file_io.exists(temporary):
        file_io.remove(temporary)
    return False

  def _close(self):
    for file in self._files:
      file.close()
    self._files = []
