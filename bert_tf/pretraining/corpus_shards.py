"""Splitting one large text corpus into shards at document boundaries.

create_pretraining_data holds one input file's documents and instances in
memory, so a worker needs memory in proportion to its largest file. A corpus
split into shards of a bounded size bounds it, and gives --num_workers and
Beam one job per shard. Shards are cut only after a blank line (where the
original starts a new document), so no document is split: each shard reads
as the same documents it held in the whole file.
"""

import logging
import os
import time

from bert_tf.files import atomic_outputs, input_checks, storage
from bert_tf.pretraining import documents

logger = logging.getLogger(__name__)

_COPIED_AT_ONCE = 1 << 20
_LOGGED_EVERY = 1 << 28  # bytes scanned between progress lines


def document_aligned_ranges(path, shard_bytes):
  """[(start, end)] byte ranges that cover the file, each ending after a
  blank line once it holds at least shard_bytes (the last holds the rest).

  A blank line is one the original reads as blank: nothing but whitespace
  once decoded and stripped. A document longer than shard_bytes makes its
  shard longer.

  Raises:
    ValueError: the file is a TFRecord file, or a line is not UTF-8 (as
      create_pretraining_data would refuse it), naming the file and line.
  """
  documents.check_text_files([path])
  total = storage.size(path)
  ranges, start, offset = [], 0, 0
  began, next_log = time.time(), _LOGGED_EVERY
  for _, raw_line, line in input_checks.utf8_lines_with_bytes(path):
    offset += len(raw_line)
    if offset - start >= shard_bytes and not line.strip():
      ranges.append((start, offset))
      start = offset
    if offset >= next_log:
      next_log += _LOGGED_EVERY
      elapsed = time.time() - began
      logger.info("Scanned %.0f/%.0f MB (%.0f MB/s, %.0f s left)",
                  offset / 1e6, total / 1e6, offset / 1e6 / elapsed,
                  (total - offset) * elapsed / offset)
  if offset > start:
    ranges.append((start, offset))
  return ranges


def shard_paths(input_file, output_dir, count):
  """<output_dir>/<stem>-00000-of-00012<extension>, ..."""
  stem, extension = os.path.splitext(os.path.basename(input_file))
  return [os.path.join(output_dir,
                       f"{stem}-{index:05d}-of-{count:05d}{extension}")
          for index in range(count)]


def other_splits(input_file, output_dir, paths):
  """Shards of `input_file` in output_dir that are not `paths` (another
  split's, which a glob over the directory would mix in)."""
  stem, extension = os.path.splitext(os.path.basename(input_file))
  pattern = os.path.join(storage.glob_escape(output_dir),
                         f"{storage.glob_escape(stem)}-*-of-*"
                         f"{storage.glob_escape(extension)}")
  ours = set(paths)
  return [path for path in storage.glob(pattern) if path not in ours]


def write_shards(input_file, ranges, paths):
  """Copies each byte range to its path; the shards appear together, and
  only when all are complete (atomic_outputs.AtomicFiles)."""
  with storage.open_file(input_file, "rb") as reader, \
      atomic_outputs.AtomicFiles(paths, "wb") as writers:
    for (start, end), writer in zip(ranges, writers):
      reader.seek(start)
      left = end - start
      while left:
        chunk = reader.read(min(left, _COPIED_AT_ONCE))
        if not chunk:
          raise ValueError(f"{input_file} changed while it was split")
        writer.write(chunk)
        left -= len(chunk)
