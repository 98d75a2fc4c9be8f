"""SQuAD's official metrics, and the null threshold that maximises them.

What evaluate-v1.1.py (exact_match, f1) and evaluate-v2.0.py (exact, f1,
HasAns_*, NoAns_*, best_exact, best_f1 and their thresholds) compute, with
their normalisation: lower case, no punctuation, no articles (a, an, the),
single spaces; each prediction scored against the best of its gold answers.

The official threshold search can only lower the threshold: fed predictions
already cut at a threshold (a question already answered "" cannot come
back), it never finds a better one above it. `null_threshold_metrics`
searches over every question's best non-null answer and its null_odds
instead, so best_f1_thresh is the threshold that maximises F1 on the file,
and predicting again with it gives that F1.
"""

import collections
import re
import string

import numpy as np

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_answer(text):
  """Lower case, no punctuation, no articles, single spaces (official)."""
  return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION))
                  .split())


def exact_score(prediction, gold):
  return float(normalize_answer(prediction) == normalize_answer(gold))


def f1_score(prediction, gold, empty_matches_empty):
  """Token F1 of the normalised texts. evaluate-v2.0.py scores an empty
  text 1 against an empty text and 0 against any other (empty_matches_empty);
  evaluate-v1.1.py scores it 0."""
  prediction_tokens = normalize_answer(prediction).split()
  gold_tokens = normalize_answer(gold).split()
  if empty_matches_empty and not (prediction_tokens and gold_tokens):
    return float(prediction_tokens == gold_tokens)
  common = collections.Counter(prediction_tokens) & collections.Counter(
      gold_tokens)
  num_same = sum(common.values())
  if num_same == 0:
    return 0.0
  precision = num_same / len(prediction_tokens)
  recall = num_same / len(gold_tokens)
  return 2 * precision * recall / (precision + recall)


def squad_v1_metrics(examples, predictions):
  """evaluate-v1.1.py: {exact_match, f1} in percent.

  Args:
    examples: SquadExamples with gold_answers.
    predictions: {qas_id: text}; a question missing from it scores 0, as
      in the official script.
  """
  exact = f1 = 0.0
  for example in examples:
    if example.qas_id not in predictions:
      continue
    prediction = predictions[example.qas_id]
    exact += max(exact_score(prediction, gold)
                 for gold in example.gold_answers)
    f1 += max(f1_score(prediction, gold, empty_matches_empty=False)
              for gold in example.gold_answers)
  return {"exact_match": np.float64(100.0 * exact / len(examples)),
          "f1": np.float64(100.0 * f1 / len(examples))}


def _v2_scores(example, prediction):
  """(exact, f1) of one prediction, as evaluate-v2.0.py's get_raw_scores:
  gold answers that normalise to nothing are dropped; none left means the
  question is unanswerable and "" is the answer."""
  golds = [gold for gold in example.gold_answers
           if normalize_answer(gold)] or [""]
  return (max(exact_score(prediction, gold) for gold in golds),
          max(f1_score(prediction, gold, empty_matches_empty=True)
              for gold in golds))


def has_answer(example):
  """Whether evaluate-v2.0.py counts the question as answerable: it has
  answers (even ones that normalise to nothing)."""
  return bool(example.gold_answers)


def squad_v2_metrics(examples, predictions, null_odds, best_non_null):
  """evaluate-v2.0.py's numbers, with an unbiased threshold search.

  exact, f1 and the HasAns_/NoAns_ breakdown are those of `predictions`
  (what evaluate-v2.0.py reports given --na-prob-file null_odds.json and
  --na-prob-thresh at the threshold they were cut at). best_exact and
  best_f1 are the highest scores any threshold gives, and
  best_exact_thresh, best_f1_thresh a threshold that gives them: predicting
  with --null_score_diff_threshold set to it answers "" exactly where
  null_odds exceeds it, and scores best_exact (best_f1) on this file.

  Args:
    examples: SquadExamples with gold answers.
    predictions: {qas_id: text}, as written to predictions.json.
    null_odds: {qas_id: null score - best non-null score}.
    best_non_null: {qas_id: the best non-null answer}.
  """
  qas_ids = [example.qas_id for example in examples]
  answerable = {example.qas_id: has_answer(example) for example in examples}
  scores = {example.qas_id: _v2_scores(example, predictions[example.qas_id])
            for example in examples}
  results = {}
  groups = (("", qas_ids),
            ("HasAns_", [qas_id for qas_id in qas_ids if answerable[qas_id]]),
            ("NoAns_", [qas_id for qas_id in qas_ids
                        if not answerable[qas_id]]))
  for prefix, group in groups:
    if not group:
      continue
    results[f"{prefix}exact"] = np.float64(
        100.0 * sum(scores[qas_id][0] for qas_id in group) / len(group))
    results[f"{prefix}f1"] = np.float64(
        100.0 * sum(scores[qas_id][1] for qas_id in group) / len(group))
    results[f"{prefix}total"] = len(group)
  answered_scores = {
      example.qas_id: _v2_scores(example, best_non_null[example.qas_id])
      for example in examples}
  for index, name in ((0, "exact"), (1, "f1")):
    best, threshold = best_threshold(
        qas_ids, null_odds,
        {qas_id: answered_scores[qas_id][index] for qas_id in qas_ids},
        {qas_id: float(not answerable[qas_id]) for qas_id in qas_ids})
    results[f"best_{name}"] = np.float64(100.0 * best / len(qas_ids))
    results[f"best_{name}_thresh"] = np.float64(threshold)
  return results


def best_threshold(qas_ids, null_odds, answered_score, null_score):
  """(the best total score, a threshold giving it).

  A question scores answered_score when answered (null_odds <= threshold)
  and null_score when answered "". Every distinct null_odds value is tried
  as the threshold (questions with equal null_odds switch together), and
  answering none (a threshold below them all).
  """
  ordered = sorted(qas_ids, key=lambda qas_id: null_odds[qas_id])
  total = sum(null_score[qas_id] for qas_id in qas_ids)
  best = total
  threshold = null_odds[ordered[0]] - 1.0 if ordered else 0.0
  for position, qas_id in enumerate(ordered):
    total += answered_score[qas_id] - null_score[qas_id]
    is_last_of_value = (position + 1 == len(ordered) or
                        null_odds[ordered[position + 1]] != null_odds[qas_id])
    if is_last_of_value and total > best:
      best, threshold = total, null_odds[qas_id]
  return best, threshold
