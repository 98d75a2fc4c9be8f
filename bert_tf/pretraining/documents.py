"""Reading document-level text (one sentence per line, blank line between
documents) into token-id documents, exactly as create_pretraining_data.py."""

import itertools
import logging
import time

from bert_tf.data import tfrecords
from bert_tf.files import input_checks

logger = logging.getLogger(__name__)

# Lines tokenised at once: enough to share among cores, few enough to hold.
_LINES_PER_CHUNK = 1 << 18


def check_text_files(input_files, flag_name="--input_file"):
  """Raises ValueError for an input that is a TFRecord file, not text: read
  as text, its bytes would make hundreds of thousands of garbage lines."""
  for path in input_files:
    if tfrecords.is_tfrecord_file(path):
      raise ValueError(f"{flag_name}: {path} is a TFRecord file, not text "
                       f"(one sentence per line, blank lines between "
                       f"documents)")


def stripped_lines(input_files):
  """Every line of every file in order, decoded and stripped as the original.

  The original reads with readline(), which splits on "\\n" only and
  decodes UTF-8 strictly (it stops at invalid bytes with a traceback; this
  names the file and line), and strips Python whitespace.
  """
  for input_file in input_files:
    for _, line in input_checks.utf8_lines(input_file):
      yield line.strip()


def read_documents(input_files, tokenizer, processes=None):
  """[[sentence ids, ...] per document], empty documents dropped.

  As in the original, a blank line starts a new document, documents run on
  across file boundaries, and a line that tokenises to nothing is skipped.
  Lines are tokenised _LINES_PER_CHUNK at a time, each chunk on every core
  (tokenizer.encode_many).

  Args:
    input_files: paths, read in order.
    tokenizer: a tokenization.FullTokenizer.
    processes: encode_many's processes (None: one per core).
  """
  documents = [[]]
  start, lines_read = time.time(), 0
  for lines in _chunks(stripped_lines(input_files), _LINES_PER_CHUNK):
    for line, sentence in zip(lines, tokenizer.encode_many(lines, processes)):
      if not line:
        documents.append([])
      elif sentence:
        documents[-1].append(sentence)
    lines_read += len(lines)
    logger.info("Read %d lines, %d documents (%.0f lines/s)", lines_read,
                len(documents), lines_read / (time.time() - start))
  documents = [document for document in documents if document]
  logger.info("Read %d lines into %d documents in %.1f s", lines_read,
              len(documents), time.time() - start)
  return documents


def _chunks(items, size):
  """Lists of `size` consecutive items (the last one shorter)."""
  items = iter(items)
  while chunk := list(itertools.islice(items, size)):
    yield chunk
