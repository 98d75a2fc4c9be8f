"""transformers 4's question-answering pipeline's answers, from a
question's pieces, its context's pieces with their character offsets and
words, and the model's logits: what pipeline("question-answering") answers
for a BertForQuestionAnswering folder (its fast tokenizer).

Windows are the fast tokenizer's truncation="only_second" with overflow:
[CLS] question [SEP] context pieces [SEP], the whole question in each
(max_question_len is not applied), max_seq_len - len(question) - 3 context
pieces a window, consecutive windows overlapping by doc_stride pieces.

Each window is decoded as the pipeline decodes it: the logits of what is
neither [CLS] nor the context masked, a softmax each for start and end,
their outer product over spans of at most max_answer_len pieces, the best
top_k * 2 + 10 of them (numpy's selection, ties as numpy breaks them),
each widened to the whole words of its first and last pieces in the
window; an answer whose lower-cased text equals one found before adds its
score to that one. With handle_impossible_answer the null answer ("", 0,
0) scores the least [CLS] start x end probability of any window.
"""

import collections
import dataclasses
import numbers

import numpy as np

from bert_tf.text.preprocessor import is_number

# The pipeline's arguments that bert_tf takes, and their defaults;
# max_seq_len's is the preprocessor's max_seq_length, doc_stride's
# min(max_seq_len // 2, 128).
DEFAULTS = {"top_k": 1, "handle_impossible_answer": False,
            "max_answer_len": 15, "align_to_words": True,
            "max_seq_len": None, "doc_stride": None, "max_question_len": 64}
# What the pipeline gives a masked logit.
_MASKED_LOGIT = -10000.0
# The null score before any window's.
_NO_NULL_SCORE = 1000000

# A window: input_ids and segment_ids (lists, unpadded), context_start (the
# position of its first context piece) and its context pieces' starts,
# ends and words (their index among the context's words).
Window = collections.namedtuple(
    "Window", ["input_ids", "segment_ids", "context_start", "starts", "ends",
               "words"])


@dataclasses.dataclass(frozen=True)
class PipelineOptions:
  """The pipeline's decoding arguments."""
  top_k: int = 1
  handle_impossible_answer: bool = False
  max_answer_len: int = 15
  align_to_words: bool = True


def checked_settings(settings, max_seq_length, max_positions, where):
  """(max_seq_len, doc_stride, PipelineOptions) of the pipeline's
  arguments given (a dict), defaults filled in; ValueError naming the
  first one out of range."""
  values = {**DEFAULTS, **settings}
  if values["max_seq_len"] is None:
    values["max_seq_len"] = max_seq_length
  _check_int(values, "max_seq_len", 4, where)
  if values["max_seq_len"] > max_positions:
    raise ValueError(f"{where}: max_seq_len={values['max_seq_len']} is more "
                     f"than the model's {max_positions} positions")
  if values["doc_stride"] is None:
    values["doc_stride"] = min(values["max_seq_len"] // 2, 128)
  for name, least in (("doc_stride", 0), ("max_question_len", 1),
                      ("top_k", 1), ("max_answer_len", 1)):
    _check_int(values, name, least, where)
  if values["doc_stride"] > values["max_seq_len"]:
    raise ValueError(f"{where}: doc_stride={values['doc_stride']} is more "
                     f"than max_seq_len={values['max_seq_len']}")
  for name in ("handle_impossible_answer", "align_to_words"):
    if not isinstance(values[name], (bool, np.bool_)):
      raise ValueError(f"{where}: {name}={values[name]!r}; expected True or "
                       "False")
  return values["max_seq_len"], values["doc_stride"], PipelineOptions(
      int(values["top_k"]), bool(values["handle_impossible_answer"]),
      int(values["max_answer_len"]), bool(values["align_to_words"]))


def _check_int(values, name, least, where):
  value = values[name]
  if not is_number(value, numbers.Integral) or value < least:
    raise ValueError(f"{where}: {name}={value!r}; expected an integer of at "
                     f"least {least}")


def windows(question_ids, pieces, max_seq_len, doc_stride, cls_id, sep_id,
            where):
  """The fast tokenizer's windows of one question and its context.

  Args:
    question_ids: the question's piece ids.
    pieces: the context's pieces, [(id, start, end, word)].
    max_seq_len, doc_stride: the pipeline's.
    cls_id, sep_id: the ids of [CLS] and [SEP].
    where: names the question in errors.

  Returns:
    [Window], at least one.

  Raises:
    ValueError: the question leaves no room for context, or doc_stride not
      less than the room (the tokenizer refuses both).
  """
  room = max_seq_len - len(question_ids) - 3
  spans = [(0, len(pieces))]
  if len(pieces) > room:
    if room < 1:
      raise ValueError(f"{where}: the question's {len(question_ids)} pieces "
                       f"leave no room for its context in max_seq_len="
                       f"{max_seq_len}")
    if doc_stride >= room:
      raise ValueError(f"{where}: doc_stride={doc_stride} must be less than "
                       f"the {room} context pieces a window holds")
    spans = []
    for start in range(0, len(pieces), room - doc_stride):
      spans.append((start, min(start + room, len(pieces))))
      if spans[-1][1] == len(pieces):
        break
  head = [cls_id, *question_ids, sep_id]
  found = []
  for start, stop in spans:
    ids, starts, ends, words = (list(column) for column in zip(
        *pieces[start:stop])) if stop > start else ([], [], [], [])
    found.append(Window(head + ids + [sep_id],
                        [0] * len(head) + [1] * (len(ids) + 1), len(head),
                        starts, ends, words))
  return found


def answers(context, decoded, options):
  """The pipeline's answers to one question.

  Args:
    context: the context as sent.
    decoded: [(Window, start_logits, end_logits)] of the question's
      windows, the logits [len(window.input_ids)].
    options: PipelineOptions.

  Returns:
    up to top_k {"score", "start", "end", "answer"}, best first.
  """
  null_score = _NO_NULL_SCORE
  found = []
  for window, start_logits, end_logits in decoded:
    starts, ends, scores, null_score = _best_spans(
        window, start_logits, end_logits, null_score, options)
    for first, last, score in zip(starts, ends, scores):
      start, end = _characters(window, int(first), int(last),
                               options.align_to_words)
      text = context[start:end]
      same = next((answer for answer in found
                   if answer["answer"].lower() == text.lower()), None)
      if same is not None:
        same["score"] += score.item()
      else:
        found.append({"score": score.item(), "start": start, "end": end,
                      "answer": text})
  if options.handle_impossible_answer:
    found.append({"score": null_score, "start": 0, "end": 0, "answer": ""})
  return sorted(found, key=lambda answer: answer["score"],
                reverse=True)[:options.top_k]


def _best_spans(window, start_logits, end_logits, null_score, options):
  """(starts, ends, scores, null_score): a window's best spans, positions
  in the window, as the pipeline's select_starts_ends and decode_spans."""
  length = len(window.input_ids)
  answerable = np.zeros([1, length], np.int64)
  answerable[0, 0] = 1
  answerable[0, window.context_start:length - 1] = 1
  masked = answerable == 0
  start = np.where(masked, _MASKED_LOGIT,
                   np.asarray(start_logits, np.float32)[None])
  end = np.where(masked, _MASKED_LOGIT,
                 np.asarray(end_logits, np.float32)[None])
  start = np.exp(start - start.max(axis=-1, keepdims=True))
  start = start / start.sum()
  end = np.exp(end - end.max(axis=-1, keepdims=True))
  end = end / end.sum()
  if options.handle_impossible_answer:
    null_score = min(null_score, (start[0, 0] * end[0, 0]).item())
  start[0, 0] = end[0, 0] = 0.0
  outer = np.matmul(np.expand_dims(start, -1), np.expand_dims(end, 1))
  candidates = np.tril(np.triu(outer), options.max_answer_len - 1)
  flat = candidates.flatten()
  top = options.top_k * 2 + 10 if options.align_to_words else options.top_k
  if top == 1:
    order = [np.argmax(flat)]
  elif len(flat) < top:
    order = np.argsort(-flat)
  else:
    chosen = np.argpartition(-flat, top)[0:top]
    order = chosen[np.argsort(-flat[chosen])]
  starts, ends = np.unravel_index(order, candidates.shape)[1:]
  allowed = answerable.nonzero()
  kept = np.isin(starts, allowed) & np.isin(ends, allowed)
  starts, ends = starts[kept], ends[kept]
  return starts, ends, candidates[0, starts, ends], null_score


def _characters(window, first, last, align_to_words):
  """(start, end) in the context of the span of window positions first to
  last: the whole words of both in the window (the pipeline's
  word_to_chars), else, or where one is [CLS], their own pieces' offsets
  ([CLS]'s are (0, 0))."""
  first_piece = first - window.context_start
  last_piece = last - window.context_start
  if align_to_words and first_piece >= 0 and last_piece >= 0:
    return (window.starts[window.words.index(window.words[first_piece])],
            window.ends[_last_index(window.words, window.words[last_piece])])
  return (window.starts[first_piece] if first_piece >= 0 else 0,
          window.ends[last_piece] if last_piece >= 0 else 0)


def _last_index(values, value):
  return len(values) - 1 - values[::-1].index(value)
