"""A question about a context -> run_squad's answer, in TensorFlow ops: the
one implementation behind the export's serve_text and
BertSpanLabeler.predict.

It makes the features run_squad makes (windows.doc_stride_windows), runs
the span model on every window at once and picks the answer as the
original's write_predictions ranks them (spans.best_spans): the best start
+ end logit over each window's n_best_size best starts and ends, the start
in its max-context window, at most max_answer_length pieces; where no such
pair exists, the best valid span anywhere. The answer's text is
predictions.json's (final_text): the pieces' characters, or where the
original's get_final_text falls back, their whole words.
"""

import collections

import tensorflow as tf

from bert_tf.text.offsets import tokenize_with_offsets
from bert_tf.text.squad.final_text import final_text
from bert_tf.text.squad.spans import best_spans
from bert_tf.text.squad.windows import doc_stride_windows
from bert_tf.wordpiece.rules import CLS_TOKEN, SEP_TOKEN, UNK_TOKEN

# run_squad's flags that shape the windows.
WindowLengths = collections.namedtuple(
    "WindowLengths", ["max_seq_length", "doc_stride", "max_query_length"])


def answer_questions(model, tokenizer, question, context, lengths, options):
  """Each question's answer about its context.

  Args:
    model: a span model: a dict of input_ids, input_mask, segment_ids
      [windows, max_seq_length] -> start_logits, end_logits.
    tokenizer: an InGraphTokenizer of the original's rules.
    question, context: [batch] valid UTF-8 strings.
    lengths: WindowLengths.
    options: answer_options.AnswerOptions.

  Returns:
    A dict of [batch] tensors: answer (string), answer_start, answer_end
    (int64 character offsets into the context, end exclusive; -1 when
    there is no answer), score (float32 start + end logit); with
    options.version_2_with_negative also null_odds (null score - score,
    the original's null_odds.json) and has_answer (null_odds <=
    null_score_diff_threshold; else the answer is ""). A context without
    word pieces has no answer.
  """
  query_ids = tokenizer(question)[:, :lengths.max_query_length]
  pieces = tokenize_with_offsets(tokenizer, context)
  windows = doc_stride_windows(
      query_ids, pieces.ids.merge_dims(1, 2), lengths.max_seq_length,
      lengths.doc_stride, tokenizer.vocab[CLS_TOKEN],
      tokenizer.vocab[SEP_TOKEN])
  outputs = model({name: windows[name] for name in
                   ("input_ids", "input_mask", "segment_ids")})
  span = best_spans(tf.cast(outputs["start_logits"], tf.float32),
                    tf.cast(outputs["end_logits"], tf.float32), windows,
                    options, tf.size(context, tf.int64))
  found = (span["score"] > -float("inf")) & (
      pieces.ids.merge_dims(1, 2).row_lengths() > 0)
  result = {"score": _finite32(span["score"])}
  if options.version_2_with_negative:
    null_odds = span["null_score"] - span["score"]
    found &= null_odds <= options.null_score_diff_threshold
    result.update(null_odds=_finite32(null_odds), has_answer=found)
  answer = final_text(
      context, piece_offset(pieces.starts, span["start"]),
      piece_offset(pieces.ends, span["end"]),
      has_piece(pieces.ids, span, tokenizer.vocab[UNK_TOKEN]),
      pieces.words.text_char_sizes)
  result.update(answer_start=tf.where(found, answer.start, -1),
                answer_end=tf.where(found, answer.end, -1),
                answer=tf.where(found, answer.text, ""))
  return result


def piece_offset(offsets, pieces):
  """offsets [batch, (words), (pieces)] at one piece of each row (any row
  may have no pieces: the index is then unused)."""
  dense = offsets.merge_dims(1, 2).to_tensor(-1)
  dense = tf.concat([dense, -tf.ones([tf.shape(dense)[0], 1], tf.int64)],
                    axis=1)
  return tf.gather(dense, tf.clip_by_value(pieces, 0, tf.shape(
      dense, out_type=tf.int64)[1] - 1), batch_dims=1)


def has_piece(ids, span, piece_id):
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
