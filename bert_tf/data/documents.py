"""Reading document-level text (one sentence per line, blank line between
documents) into token-id documents, exactly as create_pretraining_data.py."""

import logging
import time

import tensorflow as tf

from bert_tf import tokenization

logger = logging.getLogger(__name__)

# Lines sent to the tokenizer's batch path at once.
_LINES_PER_BATCH = 50000


def _stripped_lines(input_files):
  """Every line of every file in order, decoded and stripped as the original.

  The original reads with readline(), which splits on "\\n" only, decodes
  UTF-8 dropping invalid bytes, and strips Python whitespace.
  """
  for input_file in input_files:
    with tf.io.gfile.GFile(input_file, "rb") as reader:
      for line in reader:
        yield tokenization.convert_to_unicode(line).strip()


def read_documents(input_files, tokenizer):
  """[[sentence ids, ...] per document], empty documents dropped.

  As in the original, a blank line starts a new document, documents run on
  across file boundaries, and a line that tokenises to nothing is skipped.

  Args:
    input_files: paths, read in order.
    tokenizer: a tokenization.FullTokenizer.
  """
  documents = [[]]
  pending = []  # (document index, stripped line) awaiting tokenisation
  start, lines_read = time.time(), 0

  def flush():
    ids = tokenizer.encode_batch([line for _, line in pending])
    for (document, _), sentence in zip(pending, ids):
      if sentence:
        documents[document].append(sentence)
    pending.clear()

  for line in _stripped_lines(input_files):
    lines_read += 1
    if not line:
      documents.append([])
      continue
    pending.append((len(documents) - 1, line))
    if len(pending) >= _LINES_PER_BATCH:
      flush()
      logger.info("Read %d lines (%.0f lines/s)", lines_read,
                  lines_read / (time.time() - start))
  flush()
  documents = [document for document in documents if document]
  logger.info("Read %d lines into %d documents in %.1f s", lines_read,
              len(documents), time.time() - start)
  return documents
