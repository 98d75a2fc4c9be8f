"""run_squad's doc_stride windows in TensorFlow ops, for raw-text serving.

The same features as squad.features makes in numpy (tested equal):
[CLS] question [SEP] window [SEP], windows of max_seq_length -
len(question) - 3 context pieces starting doc_stride apart (or a window's
length apart, if shorter) until one reaches the end, and the original's
max-context rule, computed in float64 as the original computes it.
"""

import tensorflow as tf


def doc_stride_windows(query_ids, doc_ids, max_seq_length, doc_stride,
                       cls_id, sep_id):
  """Every question's windows of its context, as model inputs.

  Args:
    query_ids: RaggedTensor [batch, (pieces)], already cut to
      max_query_length (so max_seq_length - 3 is more than any row).
    doc_ids: RaggedTensor [batch, (pieces)] of the contexts.
    max_seq_length, doc_stride: run_squad's flags.
    cls_id, sep_id: the ids of [CLS] and [SEP].

  Returns:
    A dict, one row per window, the windows of each question together
    and in order (a context without pieces has one empty window):
      input_ids, input_mask, segment_ids: int32 [windows, max_seq_length];
      example_index: int64 [windows], the question's row;
      doc_index: int64 [windows, max_seq_length], the context piece at
        each position, -1 elsewhere;
      is_max_context: bool [windows, max_seq_length].
  """
  query_length = query_ids.row_lengths()
  doc_length = doc_ids.row_lengths()
  room = max_seq_length - query_length - 3
  step = tf.minimum(room, doc_stride)
  # How many windows either side can share a piece with one: those whose
  # starts are less than its room away.
  band = tf.maximum(tf.reduce_max((room - 1) // step), 0)
  # Windows after the first until one reaches the end (ceiling division).
  num_windows = 1 + tf.maximum(0 * room, -((room - doc_length) // step))
  example = tf.repeat(tf.range(tf.size(num_windows, tf.int64)), num_windows)
  window_number = tf.ragged.range(num_windows).flat_values
  start = window_number * tf.gather(step, example)
  length = tf.minimum(tf.gather(doc_length, example) - start,
                      tf.gather(room, example))
  offset = tf.gather(query_length, example) + 2
  position = tf.range(max_seq_length, dtype=tf.int64)[None, :]
  in_query = (position >= 1) & (position < offset[:, None] - 1)
  in_doc = ((position >= offset[:, None])
            & (position < (offset + length)[:, None]))
  doc_index = tf.where(in_doc, start[:, None] + position - offset[:, None],
                       -1)
  query_piece = tf.gather(query_ids.row_starts(), example)[:, None] + \
      position - 1
  doc_piece = tf.gather(doc_ids.row_starts(), example)[:, None] + doc_index

  def pieces(ids, index, where):
    safe = tf.where(where, index, 0)
    values = tf.cast(tf.gather(tf.concat([ids.flat_values, [0]], 0), safe),
                     tf.int32)
    return tf.where(where, values, 0)

  last = (offset + length)[:, None]
  input_ids = pieces(query_ids, query_piece, in_query) + pieces(
      doc_ids, doc_piece, in_doc)
  input_ids = tf.where(position == 0, cls_id, input_ids)
  input_ids = tf.where((position == offset[:, None] - 1) | (position == last),
                       sep_id, input_ids)
  return {
      "input_ids": input_ids,
      "input_mask": tf.cast(position <= last, tf.int32),
      "segment_ids": tf.cast(in_doc | (position == last), tf.int32),
      "example_index": example,
      "doc_index": doc_index,
      "is_max_context": _is_max_context(example, start, length, doc_index,
                                        band),
  }


def _is_max_context(example, start, length, doc_index, band):
  """The original's _check_is_max_context at every position: a piece is
  max-context in the window where min(left, right) + 0.01 * length is
  largest, the first on ties.

  Only the windows band either side of one can hold any of its pieces
  (their starts are less than a room away), so each window is compared
  with those alone: the work is [windows, max_seq_length, 2 * band + 1],
  linear in the windows.
  """
  # [windows, neighbours]: the windows band either side of each, and
  # whether each is there and of the same question.
  offsets = tf.range(-band, band + 1)
  num_windows = tf.size(example, tf.int64)
  neighbour = tf.range(num_windows)[:, None] + offsets
  safe = tf.clip_by_value(neighbour, 0, tf.maximum(num_windows - 1, 0))
  exists = tf.equal(neighbour, safe) & tf.equal(tf.gather(example, safe),
                                                example[:, None])

  def score(window_start, window_length):
    """[windows, positions, neighbours] float64, and whether it counts."""
    position = doc_index[:, :, None]
    end = window_start + window_length - 1
    contains = (position >= window_start) & (position <= end)
    value = tf.cast(tf.minimum(position - window_start, end - position),
                    tf.float64) + 0.01 * tf.cast(window_length, tf.float64)
    return value, contains

  own, _ = score(start[:, None, None], length[:, None, None])
  theirs, contains = score(tf.gather(start, safe)[:, None],
                           tf.gather(length, safe)[:, None])
  beaten = exists[:, None] & contains & tf.where(
      offsets < 0, theirs >= own, theirs > own)
  return (doc_index >= 0) & ~tf.reduce_any(beaten, axis=2)
