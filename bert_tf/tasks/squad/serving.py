"""run_squad's export: question + context -> the answer, in the graph.

serve_text makes the features run_squad makes (squad.windows), runs the
span model on every window at once and picks the answer as the original's
write_predictions ranks them (squad.answers): the best start + end
logit over each window's n_best_size best starts and ends, the start in its
max-context window, at most max_answer_length pieces; where no such pair
exists, the best valid span anywhere (as squad.answers does). The answer's
text is predictions.json's (text.final_text): the pieces' characters, or
where the original's get_final_text falls back, their whole words.

Every step is linear in the context's length (the windows' max-context
flags compare each window with its neighbours only), and a context longer
than the export's max_context_length characters is refused before any of
them, so that one request cannot hold a server for long.
"""

import tensorflow as tf

from bert_tf.tasks.serving import IdsServing, checked_texts, ids_signatures
from bert_tf.tasks.squad.answers import LARGE_NULL_SCORE
from bert_tf.tasks.squad.windows import doc_stride_windows
from bert_tf.tasks.squad.final_text import final_text
from bert_tf.text.offsets import tokenize_with_offsets
from bert_tf.wordpiece.rules import CLS_TOKEN, SEP_TOKEN, UNK_TOKEN

# run_squad's --max_serving_context_length: 2.5 times the longest context
# of SQuAD v1.1's dev set; at BERT-Base's 384 / 128, 18 windows of English
# and at most 77 (docs/squad.md#serving-long-contexts).
MAX_SERVING_CONTEXT_LENGTH = 10_000


class SquadServing(IdsServing):
  """A span model, its tokenizer and run_squad's settings, for export.

  serving_default(input_ids, input_mask, segment_ids) -> start_logits,
      end_logits (IdsServing).
  serve_text(question, context: string [batch]) -> answer (string),
      answer_start, answer_end (int64 character offsets into the context
      as sent, end exclusive; -1 when there is no answer), score (the
      answer's start + end logit); for a v2.0 model also null_odds (null
      score - score, the original's null_odds.json) and has_answer
      (null_odds <= null_score_diff_threshold; else the answer is "").
      A context of more than max_context_length characters fails the
      request with an InvalidArgumentError.
  """

  def __init__(self, model, tokenizer, max_seq_length, doc_stride,
               max_query_length, answer_options, max_context_length):
    super().__init__(model, ("start_logits", "end_logits"))
    self.tokenizer = tokenizer
    self.max_seq_length = max_seq_length
    self.doc_stride = doc_stride
    self.max_query_length = max_query_length
    self.options = answer_options
    self.max_context_length = max_context_length

  def answer(self, question, context):
    texts = checked_texts({"question": question, "context": context},
                          offsets=True)
    question = texts["question"]
    context = _checked_length(texts["context"], self.max_context_length)
    query_ids = self.tokenizer(question)[:, :self.max_query_length]
    pieces = tokenize_with_offsets(self.tokenizer, context)
    windows = doc_stride_windows(
        query_ids, pieces.ids.merge_dims(1, 2), self.max_seq_length,
        self.doc_stride, self.tokenizer.vocab[CLS_TOKEN],
        self.tokenizer.vocab[SEP_TOKEN])
    outputs = self.model({name: windows[name] for name in
                          ("input_ids", "input_mask", "segment_ids")},
                         training=False)
    span = _best_spans(tf.cast(outputs["start_logits"], tf.float32),
                       tf.cast(outputs["end_logits"], tf.float32), windows,
                       self.options, tf.size(context, tf.int64))
    found = (span["score"] > -float("inf")) & (
        pieces.ids.merge_dims(1, 2).row_lengths() > 0)
    result = {"score": _finite32(span["score"])}
    if self.options.version_2_with_negative:
      null_odds = span["null_score"] - span["score"]
      found &= null_odds <= self.options.null_score_diff_threshold
      result.update(null_odds=_finite32(null_odds), has_answer=found)
    answer = final_text(
        context, _piece_offset(pieces.starts, span["start"]),
        _piece_offset(pieces.ends, span["end"]),
        _has_piece(pieces.ids, span, self.tokenizer.vocab[UNK_TOKEN]),
        pieces.words.text_char_sizes)
    result.update(answer_start=tf.where(found, answer.start, -1),
                  answer_end=tf.where(found, answer.end, -1),
                  answer=tf.where(found, answer.text, ""))
    return result


def squad_serving(model, tokenizer, max_seq_length, doc_stride,
                  max_query_length, answer_options,
                  max_context_length=MAX_SERVING_CONTEXT_LENGTH):
  """(SquadServing, its signatures) for export.write_saved_model; without
  a tokenizer, serving_default alone."""
  serving = SquadServing(model, tokenizer, max_seq_length, doc_stride,
                         max_query_length, answer_options,
                         max_context_length)
  signatures = ids_signatures(serving)
  if tokenizer is not None:
    text_spec = tf.TensorSpec([None], tf.string)

    @tf.function(input_signature=[text_spec] * 2)
    def serve_text(question, context):
      return serving.answer(question, context)

    signatures["serve_text"] = serve_text
  return serving, signatures


def _checked_length(context, max_context_length):
  """context, once every row is checked to have at most max_context_length
  characters: running it fails the request with an InvalidArgumentError
  naming the longest row, before the context is tokenised."""
  lengths = tf.strings.length(context, unit="UTF8_CHAR")
  # One length more, so that an empty batch has a longest row to name.
  longest = tf.argmax(tf.concat([lengths, [0]], 0), output_type=tf.int64)
  check = tf.debugging.Assert(
      tf.reduce_all(lengths <= max_context_length), [tf.strings.format(
          "context: row {} has {} characters; this export answers at most "
          f"{max_context_length} (run_squad "
          "--max_serving_context_length)",
          (longest, tf.concat([lengths, [0]], 0)[longest]))])
  with tf.control_dependencies([check]):
    return tf.identity(context)


def _piece_offset(offsets, pieces):
  """offsets [batch, (words), (pieces)] at one piece of each row (any row
  may have no pieces: the index is then unused)."""
  dense = offsets.merge_dims(1, 2).to_tensor(-1)
  dense = tf.concat([dense, -tf.ones([tf.shape(dense)[0], 1], tf.int64)],
                    axis=1)
  return tf.gather(dense, tf.clip_by_value(pieces, 0, tf.shape(
      dense, out_type=tf.int64)[1] - 1), batch_dims=1)


def _has_piece(ids, span, piece_id):
  """[batch] bool: whether a piece of each answer is piece_id."""
  ids = ids.merge_dims(1, 2).to_tensor(-1)
  positions = tf.range(tf.shape(ids, out_type=tf.int64)[1])[None]
  return tf.reduce_any(
      (positions >= span["start"][:, None])
      & (positions <= span["end"][:, None]) & tf.equal(ids, piece_id), axis=1)


def _finite32(values):
  """float64 -> float32, infinities as the largest floats (JSON has none)."""
  largest = float(tf.float32.max)
  return tf.cast(tf.clip_by_value(values, -largest, largest), tf.float32)


def _gather_rows(values, indexes):
  return tf.gather(values, indexes, batch_dims=1)


def _best_spans(start_logits, end_logits, windows, options, num_examples):
  """Each question's best span, as squad.answers ranks them: the best of
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
