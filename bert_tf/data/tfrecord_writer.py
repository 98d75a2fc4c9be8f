"""Writing TFRecord files atomically and byte-stably, round-robin."""

import uuid

import tensorflow as tf


class RoundRobinWriter:
  """Writes records to several TFRecord files in turn, as the original does.

  Records go to temporary files that are renamed over the outputs only by
  commit(), so an interrupted run leaves no truncated TFRecord and does not
  touch files that already existed. Use as a context manager: leaving the
  block without commit() deletes the temporary files.

  Example:
    >>> with RoundRobinWriter(["a.tfrecord", "b.tfrecord"]) as writer:
    ...   for example in examples:
    ...     writer.write(example)
    ...   writer.commit()
  """

  def __init__(self, output_files):
    self.output_files = list(output_files)
    self._temporary = [f"{path}.tmp-{uuid.uuid4().hex}"
                       for path in self.output_files]
    self._writers = []
    self._next = 0
    self.written = 0

  def __enter__(self):
    self._writers = [tf.io.TFRecordWriter(path) for path in self._temporary]
    return self

  def write(self, example):
    """Appends a tf.train.Example; map keys sorted so bytes are stable."""
    self._writers[self._next].write(
        example.SerializeToString(deterministic=True))
    self._next = (self._next + 1) % len(self._writers)
    self.written += 1

  def commit(self):
    """Closes the files and renames them to their final names."""
    self._close()
    for temporary, final in zip(self._temporary, self.output_files):
      tf.io.gfile.rename(temporary, final, overwrite=True)
    self._temporary = []

  def __exit__(self, *exc_info):
    self._close()
    for temporary in self._temporary:
      if tf.io.gfile.exists(temporary):
        tf.io.gfile.remove(temporary)
    return False

  def _close(self):
    for writer in self._writers:
      writer.close()
    self._writers = []
