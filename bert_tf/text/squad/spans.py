"""run_squad's choice of each question's answer span, in TensorFlow ops:
the original's write_predictions ranking (which run_squad's prediction
files take in numpy) over the windows of doc_stride_windows, for the
export's serve_text and BertSpanLabeler.predict alike."""

import tensorflow as tf

from bert_tf.text.squad.answer_options import LARGE_NULL_SCORE


def _gather_rows(values, indexes):
  return tf.gather(values, indexes, batch_dims=1)


def best_spans(start_logits, end_logits, windows, options, num_examples):
  """Each question's best span, as write_predictions ranks them: the best of
  the windows' top candidates, or where a question has none, of every
  valid span.

  Returns a dict of [questions] tensors: start, end (context pieces),
  score (float64 start + end logit; -inf where no span is valid) and
  null_score (the smallest [CLS] start + end logit over the windows, at
  most the original's starting 1e6).
  """
  doc_index = windows["doc_index"]
  in_doc = doc_index >= 0
  can_start = in_doc & windows["is_max_context"]
  starts64 = tf.cast(start_logits, tf.float64)
  ends64 = tf.cast(end_logits, tf.float64)
  top_best = _best_of_top(start_logits, end_logits, can_start, in_doc,
                          options)
  anywhere = _best_anywhere(starts64, ends64, can_start, in_doc,
                            options.max_answer_length)
  example = windows["example_index"]
  has_top = tf.math.unsorted_segment_max(
      tf.cast(top_best["score"] > -float("inf"), tf.int32), example,
      num_examples) > 0
  use_top = tf.gather(has_top, example)
  window = {name: tf.where(use_top, top_best[name], anywhere[name])
            for name in top_best}
  # The best window of each question, the first on ties.
  best = tf.math.unsorted_segment_max(window["score"], example, num_examples)
  number = tf.range(tf.size(example, tf.int64))
  chosen = tf.math.unsorted_segment_min(
      tf.where(window["score"] == tf.gather(best, example), number,
               tf.size(example, tf.int64)), example, num_examples)
  chosen = tf.minimum(chosen, tf.size(example, tf.int64) - 1)
  null_scores = starts64[:, 0] + ends64[:, 0]
  return {
      "start": tf.gather(tf.gather(doc_index, chosen), tf.gather(
          window["start"], chosen), batch_dims=1),
      "end": tf.gather(tf.gather(doc_index, chosen), tf.gather(
          window["end"], chosen), batch_dims=1),
      "score": best,
      "null_score": tf.minimum(tf.math.unsorted_segment_min(
          null_scores, example, num_examples), float(LARGE_NULL_SCORE)),
  }


def _best_of_top(start_logits, end_logits, can_start, in_doc, options):
  """Each window's best valid pair of its n_best_size best starts and
  ends: the original's candidates (top_k keeps position order on ties,
  as the original's stable sort)."""
  top = min(options.n_best_size, start_logits.shape[1])
  top_starts = tf.math.top_k(start_logits, top).indices
  top_ends = tf.math.top_k(end_logits, top).indices
  lengths = top_ends[:, None, :] - top_starts[:, :, None] + 1
  valid = (_gather_rows(can_start, top_starts)[:, :, None]
           & _gather_rows(in_doc, top_ends)[:, None, :]
           & (lengths >= 1) & (lengths <= options.max_answer_length))
  scores = (_gather_rows(tf.cast(start_logits, tf.float64),
                         top_starts)[:, :, None]
            + _gather_rows(tf.cast(end_logits, tf.float64),
                           top_ends)[:, None, :])
  return _best_pairs(tf.where(valid, scores, -float("inf")), top_starts,
                     top_ends)


def _best_anywhere(starts64, ends64, can_start, in_doc, max_answer_length):
  """Each window's best valid span of all: every valid start with each
  end up to max_answer_length pieces after it."""
  positions = tf.range(starts64.shape[1])
  ends = positions[:, None] + tf.range(max_answer_length)[None]
  padding = [[0, 0], [0, max_answer_length]]
  end_valid = tf.gather(tf.pad(in_doc, padding), ends, axis=1)
  scores = starts64[:, :, None] + tf.gather(tf.pad(ends64, padding), ends,
                                            axis=1)
  return _best_pairs(
      tf.where(can_start[:, :, None] & end_valid, scores, -float("inf")),
      tf.broadcast_to(positions, tf.shape(starts64)),
      tf.broadcast_to(ends, tf.shape(scores)), end_is_row_wise=True)


def _best_pairs(scores, starts, ends, end_is_row_wise=False):
  """The best (start, end) of each window, the first in row-major order
  on ties: {start, end (positions), score}.

  scores: [windows, starts, ends]; starts: [windows, starts] positions;
  ends: [windows, ends] positions, or [windows, starts, ends] when
  end_is_row_wise (each start its own ends).
  """
  flat = tf.reshape(scores, [tf.shape(scores)[0], -1])
  best = tf.argmax(flat, axis=1, output_type=tf.int32)
  num_ends = tf.shape(scores)[2]
  start_rank, end_rank = best // num_ends, best % num_ends
  start = _gather_rows(starts, start_rank)
  if end_is_row_wise:
    end = _gather_rows(_gather_rows(ends, start_rank), end_rank)
  else:
    end = _gather_rows(ends, end_rank)
  return {"start": tf.cast(start, tf.int64), "end": tf.cast(end, tf.int64),
          "score": tf.reduce_max(flat, axis=1)}
