"""Start and end logits -> answers, as the original's write_predictions.

For each question: the n_best_size best start and end positions of each of
its features, every valid pair of them (inside the context, the start in
its max-context window, end >= start, at most max_answer_length pieces),
ranked by start + end logit; the best n_best_size distinct answer texts,
each mapped back onto the original context by get_final_text; softmax
probabilities over them. With version_2_with_negative the null answer
competes too: its score is the smallest start+end logit at [CLS] over the
question's features, null_odds is that score minus the best non-null
answer's, and the prediction is "" when null_odds > null_score_diff_threshold.

The numbers are the original's (float32 logits, sums and softmax in
float64, ties in the original's order); the work is not: candidates are
found for all features at once with numpy, and each distinct span's text is
aligned once.

One deliberate difference: where the original has no valid candidate among
the top start and end positions, it writes "empty" (v1.1) or crashes
(v2.0, google-research/bert #211, #417, #476). Here the best valid span of
the whole context takes its place, so every question gets a real answer, a
finite null_odds and an n-best list.
"""

import dataclasses
import json
import math

import numpy as np

from bert_tf.tasks.squad.answer_texts import AnswerTexts
from bert_tf.text.squad.answer_options import LARGE_NULL_SCORE


@dataclasses.dataclass
class SquadAnswers:
  """What write_predictions writes, and what threshold tuning needs.

  Attributes:
    predictions: {qas_id: answer text} (predictions.json).
    nbest: {qas_id: [{text, probability, start_logit, end_logit}]}
      (nbest_predictions.json).
    null_odds: {qas_id: null score - best non-null score} (null_odds.json;
      empty without version_2_with_negative).
    best_non_null: {qas_id: the best non-null answer}, the prediction at
      any threshold above its null_odds.
  """
  predictions: dict
  nbest: dict
  null_odds: dict
  best_non_null: dict


def predict_answers(examples, features, start_logits, end_logits, tokenizer,
                    options):
  """Every example's answers.

  Args:
    examples: the SquadExamples, in the order convert_examples_to_features
      was given them.
    features: its features (input_ids, example_index, token_to_orig,
      token_is_max_context).
    start_logits, end_logits: [num_features, max_seq_length] float32; -inf
      past a feature's real tokens where they were not computed (a batch
      run at its own length, Predictor).
    tokenizer: the tokenization.FullTokenizer that made the features (its
      do_lower_case is get_final_text's, as in the original).
    options: answer_options.AnswerOptions.
  """
  real = features["input_mask"] > 0
  for name, logits in (("start", start_logits), ("end", end_logits)):
    if not np.isfinite(logits[real]).all():
      raise ValueError(f"the model's {name} logits are not all finite (has "
                       f"training diverged?)")
  candidates = _Candidates(features, start_logits, end_logits, len(examples),
                           options)
  texts = AnswerTexts(examples, features, tokenizer, options)
  answers = SquadAnswers({}, {}, {}, {})
  for example_index, example in enumerate(examples):
    nbest, null_score = _nbest(example_index, candidates, texts, options)
    probabilities = _compute_softmax([start + end for _, start, end in nbest])
    answers.nbest[example.qas_id] = [
        {"text": text, "probability": probability, "start_logit": start,
         "end_logit": end}
        for (text, start, end), probability in zip(nbest, probabilities)]
    best = next(entry for entry in nbest if entry[0])  # _nbest has one
    answers.best_non_null[example.qas_id] = best[0]
    if not options.version_2_with_negative:
      answers.predictions[example.qas_id] = nbest[0][0]
      continue
    null_odds = null_score - best[1] - best[2]
    answers.null_odds[example.qas_id] = null_odds
    answers.predictions[example.qas_id] = (
        "" if null_odds > options.null_score_diff_threshold else best[0])
  return answers


class _Candidates:
  """Every valid (start, end) pair among each feature's top positions,
  grouped by example and sorted as the original sorts its prelim
  predictions (as lists: the per-question loop reads them one by one); and
  each example's null score."""

  def __init__(self, features, start_logits, end_logits, num_examples,
               options):
    self.start_logits = start_logits
    self.end_logits = end_logits
    self.features = features
    self.options = options
    best_starts = _best_indexes(start_logits, options.n_best_size)
    best_ends = _best_indexes(end_logits, options.n_best_size)
    valid = _valid_spans(features, np.arange(len(start_logits))[:, None],
                         best_starts, best_ends, options.max_answer_length)
    # np.nonzero walks features, then starts, then ends: the original's
    # order of appending, which its stable sort keeps among equal scores.
    feature, start_rank, end_rank = np.nonzero(valid)
    start = best_starts[feature, start_rank]
    end = best_ends[feature, end_rank]
    # Python floats of float32 logits, added in float64 as the original.
    start_logit = start_logits[feature, start].astype(np.float64)
    end_logit = end_logits[feature, end].astype(np.float64)
    score = start_logit + end_logit
    example = features["example_index"][feature]
    order = np.lexsort((-score, example))  # stable: ties keep their order
    self.feature = feature[order].tolist()
    self.start = start[order].tolist()
    self.end = end[order].tolist()
    self.start_logit = start_logit[order].tolist()
    self.end_logit = end_logit[order].tolist()
    self.score = score[order].tolist()
    # One number per distinct span of a paragraph's pieces: equal spans of
    # overlapping windows (or of questions on one paragraph) share a text.
    piece_start = (start + features["doc_span_start"][feature]
                   - features["doc_offset"][feature])
    paragraph = features["paragraph_index"][feature].astype(np.int64)
    self.span_key = ((paragraph << 40) | (piece_start.astype(np.int64) << 16)
                     | (end - start))[order].tolist()
    token_to_orig = features["token_to_orig"]
    self.orig_start = token_to_orig[feature, start][order].tolist()
    self.orig_end = token_to_orig[feature, end][order].tolist()
    bounds = np.arange(num_examples + 1)
    self.bounds = np.searchsorted(example[order], bounds).tolist()
    self.feature_bounds = np.searchsorted(features["example_index"],
                                          bounds).tolist()

  def of_example(self, example_index):
    """Indexes of the example's candidates, best first."""
    return range(self.bounds[example_index], self.bounds[example_index + 1])

  def null(self, example_index):
    """(score, start logit, end logit) of the example's null answer: the
    feature with the smallest start+end logit at position 0, the first on
    ties, as the original."""
    first, last = self.feature_bounds[example_index:example_index + 2]
    starts = self.start_logits[first:last, 0].astype(np.float64)
    ends = self.end_logits[first:last, 0].astype(np.float64)
    scores = starts + ends
    best = int(np.argmin(scores))
    if not scores[best] < LARGE_NULL_SCORE:
      return float(LARGE_NULL_SCORE), 0.0, 0.0
    return float(scores[best]), float(starts[best]), float(ends[best])

  def best_anywhere(self, example_index):
    """(feature, start, end) of the best valid span over every position of
    the example's features: the fallback when the top positions give none.
    """
    best = None
    first, last = self.feature_bounds[example_index:example_index + 2]
    positions = np.arange(self.start_logits.shape[1])
    for feature in range(first, last):
      valid = _valid_spans(self.features, feature, positions, positions,
                           self.options.max_answer_length)
      if not valid.any():
        continue
      scores = np.where(valid, self.start_logits[feature].astype(
          np.float64)[:, None] + self.end_logits[feature][None, :], -np.inf)
      start, end = np.unravel_index(np.argmax(scores), scores.shape)
      if best is None or scores[start, end] > best[0]:
        best = (scores[start, end], feature, int(start), int(end))
    return best[1:]


def _valid_spans(features, rows, starts, ends, max_answer_length):
  """[..., len(starts), len(ends)]: whether each (start, end) of the rows'
  positions is an answer the original would consider: both in the context,
  the start in its max-context window, end >= start, at most
  max_answer_length pieces."""
  token_to_orig = features["token_to_orig"]
  start_ok = (token_to_orig[rows, starts] >= 0) & (
      features["token_is_max_context"][rows, starts] > 0)
  end_ok = token_to_orig[rows, ends] >= 0
  lengths = ends[..., None, :] - starts[..., :, None] + 1
  return (start_ok[..., :, None] & end_ok[..., None, :]
          & (lengths >= 1) & (lengths <= max_answer_length))


def _best_indexes(logits, count):
  """The original's _get_best_indexes for every row: the `count` highest
  positions, highest first, equal logits in position order (its sort is
  stable); partitioned first, as only a few of each row are wanted."""
  if count >= logits.shape[1]:
    return np.argsort(-logits, axis=1, kind="stable")
  threshold = -np.partition(-logits, count - 1, axis=1)[:, count - 1:count]
  above = logits > threshold
  ties = logits == threshold
  # Of the positions tied at the threshold, the first ones make up count.
  needed = count - above.sum(axis=1, keepdims=True)
  chosen = above | ties
  crowded = np.nonzero(ties.sum(axis=1) > needed[:, 0])[0]
  chosen[crowded] = above[crowded] | (
      ties[crowded] & (np.cumsum(ties[crowded], axis=1) <= needed[crowded]))
  positions = np.nonzero(chosen)[1].reshape(len(logits), count)
  values = np.take_along_axis(logits, positions, axis=1)
  return np.take_along_axis(
      positions, np.argsort(-values, axis=1, kind="stable"), axis=1)


def _nbest(example_index, candidates, texts, options):
  """The example's n-best entries [(text, start_logit, end_logit)] and its
  null score, as the original builds them."""
  version_2 = options.version_2_with_negative
  null_score, null_start, null_end = candidates.null(example_index) \
      if version_2 else (None, None, None)
  # The original sorts its null prediction by its logits' sum (which is
  # not null_score when no feature scored under LARGE_NULL_SCORE).
  null_rank = version_2 and null_start + null_end
  nbest, seen = [], set()
  null_pending = version_2
  for index in candidates.of_example(example_index):
    if len(nbest) >= options.n_best_size:
      break
    # The null answer was appended last before the stable sort: it ranks
    # after every candidate scoring at least as much.
    if null_pending and candidates.score[index] < null_rank:
      null_pending = False
      nbest.append(("", null_start, null_end))
      seen.add("")
      if len(nbest) >= options.n_best_size:
        break
    text = texts.cache.get(candidates.span_key[index])
    if text is None:
      text = texts.cache[candidates.span_key[index]] = texts.of(
          example_index, candidates.feature[index], candidates.start[index],
          candidates.end[index], candidates.orig_start[index],
          candidates.orig_end[index])
    if text in seen:
      continue
    seen.add(text)
    nbest.append((text, candidates.start_logit[index],
                  candidates.end_logit[index]))
  if null_pending and len(nbest) < options.n_best_size:
    nbest.append(("", null_start, null_end))
    seen.add("")
  if version_2 and "" not in seen:
    nbest.append(("", null_start, null_end))
  if not any(text for text, _, _ in nbest):
    feature, start, end = candidates.best_anywhere(example_index)
    features = candidates.features
    nbest.append((texts.of(example_index, feature, start, end,
                           int(features["token_to_orig"][feature, start]),
                           int(features["token_to_orig"][feature, end])),
                  float(candidates.start_logits[feature, start]),
                  float(candidates.end_logits[feature, end])))
  return nbest, null_score


def _compute_softmax(scores):
  """The original's softmax, in Python floats."""
  max_score = max(scores)
  exp_scores = [math.exp(score - max_score) for score in scores]
  total = 0.0
  for value in exp_scores:
    total += value
  return [value / total for value in exp_scores]


def write_json(answers, writer):
  """One of SquadAnswers' dicts as the original writes it:
  json.dumps(value, indent=4) and a newline.

  json's indented output is made in pure Python, slower than everything
  else here for the n-best lists; those (a list of flat dicts per question)
  are formatted directly, to the same text.
  """
  if not answers or not isinstance(next(iter(answers.values())), list):
    writer.write(json.dumps(answers, indent=4) + "\n")
    return
  string = json.encoder.encode_basestring_ascii
  entries = ",\n".join(
      f"    {string(qas_id)}: [\n" + ",\n".join(
          "        {\n"
          f"            \"text\": {string(entry['text'])},\n"
          f"            \"probability\": {entry['probability']!r},\n"
          f"            \"start_logit\": {entry['start_logit']!r},\n"
          f"            \"end_logit\": {entry['end_logit']!r}\n"
          "        }" for entry in nbest) + "\n    ]"
      for qas_id, nbest in answers.items())
  writer.write("{\n" + entries + "\n}\n")
