"""extract_features' two output files, written from the predicted lines as
they come: the original's JSONL and an npz of float32 arrays."""

import collections
import zipfile
from concurrent import futures

import numpy as np

from bert_tf.features.jsonl import jsonl_line
from bert_tf.files import file_io

# Lines predicted and not yet written, at most.
_LINES_AHEAD = 256


def write_jsonl(path, lines, layers):
  """The original's JSONL of (tokens, float32 [layers, tokens, hidden])
  per line. Printing and writing run in a thread of their own, while the
  model predicts the next lines (TensorFlow releases the GIL as it
  computes)."""
  with file_io.atomic_write(path) as writer, \
      futures.ThreadPoolExecutor(1) as printer:
    pending = collections.deque()
    for index, (tokens, values) in enumerate(lines):
      pending.append(printer.submit(
          lambda *line: writer.write(jsonl_line(*line)), index, tokens,
          layers, values))
      while len(pending) > _LINES_AHEAD:
        pending.popleft().result()
    for line in pending:
      line.result()


def write_npz(path, lines, layers, num_tokens, hidden_size):
  """The npz of (tokens, float32 [layers, tokens, hidden]) per line:
  values float32 [tokens, layers, hidden], every line's real
  tokens one after another (the JSONL's order; layers in --layers order),
  tokens [tokens] (str), lengths [lines] (a line's tokens are the next
  `length` of them) and layers [k] (the --layers values).

  values is streamed into the archive line by line (its shape is known
  before the model runs), so memory stays that of a chunk, as for JSONL.
  """
  tokens, lengths = [], []
  with file_io.atomic_write(path, "wb") as writer, \
      zipfile.ZipFile(writer, "w", allowZip64=True) as archive:
    with archive.open("values.npy", "w", force_zip64=True) as values_file:
      np.lib.format.write_array_header_1_0(values_file, {
          "descr": np.lib.format.dtype_to_descr(np.dtype(np.float32)),
          "fortran_order": False,
          "shape": (num_tokens, len(layers), hidden_size)})
      for line_tokens, values in lines:
        tokens += line_tokens
        lengths.append(len(line_tokens))
        values_file.write(np.ascontiguousarray(
            values.transpose(1, 0, 2), np.float32).tobytes())
    for name, array in (("tokens", np.array(tokens)),
                        ("lengths", np.array(lengths, np.int32)),
                        ("layers", np.array(layers, np.int32))):
      with archive.open(f"{name}.npy", "w", force_zip64=True) as file:
        np.lib.format.write_array(file, array)
