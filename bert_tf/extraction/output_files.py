"""extract_features' two output files, written from the predicted lines as
they come: the original's JSONL and an npz of float32 arrays; of the
per-token layers, of sentence embeddings (those also quantized: int8,
uint8), or of sparse embeddings."""

import collections
import zipfile
from concurrent import futures

import numpy as np

from bert_tf.extraction.jsonl import (embedding_line, jsonl_line,
                                      sparse_line)
from bert_tf.files import atomic_outputs

JSONL, NPZ = "jsonl", "npz"

# Lines predicted and not yet written, at most.
_LINES_AHEAD = 256


def write_jsonl(path, lines, layers):
  """The original's JSONL of (tokens, float32 [layers, tokens, hidden])
  per line."""
  _write_printed(path, ((jsonl_line, index, tokens, layers, values)
                        for index, (tokens, values) in enumerate(lines)))


def write_embeddings_jsonl(path, embeddings):
  """One {"linex_index", "embedding"} line per [dim] embedding, float32
  or integers (jsonl.embedding_line)."""
  _write_printed(path, ((embedding_line, index, embedding)
                        for index, embedding in enumerate(embeddings)))


def write_sparse_jsonl(path, lines):
  """One {"linex_index", "embedding": {token: weight}} line per (tokens,
  weights) (jsonl.sparse_line)."""
  _write_printed(path, ((sparse_line, index, tokens, weights)
                        for index, (tokens, weights) in enumerate(lines)))


def _write_printed(path, lines):
  """Writes print_line(*arguments) of each (print_line, *arguments).
  Printing and writing run in a thread of their own, while the model
  predicts the next lines (TensorFlow releases the GIL as it computes)."""
  with atomic_outputs.atomic_write(path) as writer, \
      futures.ThreadPoolExecutor(1) as printer:
    pending = collections.deque()
    for print_line, *arguments in lines:
      pending.append(printer.submit(
          lambda print_line, *line: writer.write(print_line(*line)),
          print_line, *arguments))
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

  def token_major(lines):
    for line_tokens, values in lines:
      tokens.extend(line_tokens)
      lengths.append(len(line_tokens))
      yield values.transpose(1, 0, 2)

  with atomic_outputs.atomic_write(path, "wb") as writer, \
      zipfile.ZipFile(writer, "w", allowZip64=True) as archive:
    _write_streamed(archive, "values", (num_tokens, len(layers), hidden_size),
                    token_major(lines))
    _write_arrays(archive, {"tokens": np.array(tokens),
                            "lengths": np.array(lengths, np.int32),
                            "layers": np.array(layers, np.int32)})


def write_embeddings_npz(path, embeddings, count, dimension,
                         dtype=np.float32):
  """The npz of `count` [dimension] embeddings: embeddings [count,
  dimension] of dtype, streamed in as they come."""
  with atomic_outputs.atomic_write(path, "wb") as writer, \
      zipfile.ZipFile(writer, "w", allowZip64=True) as archive:
    _write_streamed(archive, "embeddings", (count, dimension), embeddings,
                    dtype)


def write_sparse_npz(path, lines, vocab_size):
  """The npz of (token ids, weights) per line, as a CSR matrix [lines,
  vocab_size] (scipy.sparse.csr_matrix((values, indices, indptr),
  shape)): values float32 [nnz], indices int32 [nnz] (the token ids,
  ascending in each row), indptr int64 [lines + 1] (row i is
  values[indptr[i]:indptr[i + 1]]) and shape int64 [2]. Their size is
  known once every line is predicted: the file's weights are held in
  memory until then."""
  rows = [_by_id(ids, weights) for ids, weights in lines]
  indptr = np.cumsum([0] + [len(ids) for ids, _ in rows], dtype=np.int64)
  with atomic_outputs.atomic_write(path, "wb") as writer, \
      zipfile.ZipFile(writer, "w", allowZip64=True) as archive:
    _write_arrays(archive, {
        "values": np.concatenate(
            [np.zeros(0, np.float32)] + [weights for _, weights in rows]),
        "indices": np.concatenate(
            [np.zeros(0, np.int32)] + [ids for ids, _ in rows]),
        "indptr": indptr,
        "shape": np.array([len(rows), vocab_size], np.int64)})


def _by_id(ids, weights):
  """(ids, weights) in ascending id order."""
  order = np.argsort(ids)
  return ids[order], weights[order]


def _write_arrays(archive, arrays):
  """<name>.npy in the archive for each {name: array}."""
  for name, array in arrays.items():
    with archive.open(f"{name}.npy", "w", force_zip64=True) as file:
      np.lib.format.write_array(file, array)


def _write_streamed(archive, name, shape, parts, dtype=np.float32):
  """<name>.npy in the archive: an array of `shape` (known before the
  model runs) and dtype, written from its consecutive parts as they
  come."""
  with archive.open(f"{name}.npy", "w", force_zip64=True) as file:
    np.lib.format.write_array_header_1_0(file, {
        "descr": np.lib.format.dtype_to_descr(np.dtype(dtype)),
        "fortran_order": False, "shape": shape})
    for part in parts:
      file.write(np.ascontiguousarray(part, dtype).tobytes())
