"""SQuAD metrics on hand-made cases, and the null threshold search."""

import pytest

from bert_tf.tasks.squad import metrics
from bert_tf.text.squad.examples import Paragraph, SquadExample


def example(qas_id, *answers):
  return SquadExample(qas_id, "?", Paragraph.from_context("x"),
                      gold_answers=answers,
                      gold_is_impossible=not answers)


@pytest.mark.parametrize("text, normalized", [
    ("The  Cat's, hat!", "cats hat"),
    ("an apple\tAND a pear.", "apple and pear"),
    ("Theatre anthem", "theatre anthem"),  # articles as whole words only
    ("  ", ""),
    ("¿Qué?", "¿qué"),  # string.punctuation is ASCII, as the official
])
def test_normalize_answer(text, normalized):
  assert metrics.normalize_answer(text) == normalized


def test_f1_by_hand():
  # the cat sat | a cat sat on: 2 common of 2 predicted, 3 gold.
  assert metrics.f1_score("the cat sat", "a cat sat on", False) == \
      pytest.approx(2 * 1 * (2 / 3) / (1 + 2 / 3))
  assert metrics.f1_score("cat cat", "cat", False) == pytest.approx(2 / 3)
  # An answer that normalises to nothing: 0 in v1.1, and in v2.0 1 only
  # against another such answer.
  assert metrics.f1_score(".", ".", False) == 0.0
  assert metrics.f1_score(".", "the", True) == 1.0
  assert metrics.f1_score("", "cat", True) == 0.0


def test_v1_takes_the_best_gold_answer_and_counts_missing_as_zero():
  examples = [example("a", "Denver Broncos", "the Broncos"),
              example("b", "1998"), example("c", "blue")]
  results = metrics.squad_v1_metrics(examples, {"a": "Denver", "b": "1998"})
  assert results["exact_match"] == pytest.approx(100 / 3)
  # a: F1 2/3 against "Denver Broncos", the better of its two.
  assert results["f1"] == pytest.approx(100 * (2 / 3 + 1) / 3)
  results = metrics.squad_v1_metrics(examples, {"a": "The Broncos!",
                                                "b": "1998", "c": "blue"})
  assert results == {"exact_match": 100.0, "f1": 100.0}


def official_best_thresh(preds, scores, na_probs, qid_to_has_ans):
  """evaluate-v2.0.py's find_best_thresh, as the official script has it."""
  num_no_ans = sum(1 for k in qid_to_has_ans if not qid_to_has_ans[k])
  cur_score = best_score = num_no_ans
  best_thresh = 0.0
  for qid in sorted(na_probs, key=lambda k: na_probs[k]):
    if qid_to_has_ans[qid]:
      diff = scores[qid]
    else:
      diff = -1 if preds[qid] else 0
    cur_score += diff
    if cur_score > best_score:
      best_score, best_thresh = cur_score, na_probs[qid]
  return 100.0 * best_score / len(scores), best_thresh


# Five questions: (gold answers, best non-null answer, null_odds).
QUESTIONS = {
    "a": (("Paris",), "Paris", -2.0),
    "b": (("Rome",), "Rome", 0.5),  # right, but cut at threshold 0
    "c": ((), "London", 1.5),  # unanswerable
    "d": (("Oslo",), "Oslo", 1.2),  # right, cut
    "e": ((), "Bern", 3.0),  # unanswerable
}


def cut(threshold):
  return {qas_id: "" if odds > threshold else answer
          for qas_id, (_, answer, odds) in QUESTIONS.items()}


def v2_metrics(threshold):
  examples = [example(qas_id, *gold)
              for qas_id, (gold, _, _) in QUESTIONS.items()]
  return metrics.squad_v2_metrics(
      examples, cut(threshold),
      {qas_id: odds for qas_id, (_, _, odds) in QUESTIONS.items()},
      {qas_id: answer for qas_id, (_, answer, _) in QUESTIONS.items()})


def test_v2_metrics_of_the_predictions_as_cut():
  results = v2_metrics(0.0)
  # a right; b, d answered "" (wrong); c, e "" (right).
  assert results["exact"] == results["f1"] == pytest.approx(60.0)
  assert (results["HasAns_exact"], results["HasAns_total"]) == (
      pytest.approx(100 / 3), 3)
  assert (results["NoAns_exact"], results["NoAns_total"]) == (100.0, 2)
  assert results["total"] == 5


def test_the_best_threshold_is_found_above_the_one_applied():
  # The best is 1.2: answer a, b, d, not c, e: all right.
  results = v2_metrics(0.0)
  assert results["best_f1"] == results["best_exact"] == 100.0
  assert results["best_f1_thresh"] == results["best_exact_thresh"] == 1.2
  # The official search on the same cut predictions cannot see it.
  preds = cut(0.0)
  scores = {qas_id: float(preds[qas_id] == (gold or ("",))[0])
            for qas_id, (gold, _, _) in QUESTIONS.items()}
  official = official_best_thresh(
      preds, scores, {k: odds for k, (_, _, odds) in QUESTIONS.items()},
      {k: bool(gold) for k, (gold, _, _) in QUESTIONS.items()})
  assert official == (pytest.approx(60.0), -2.0)
  # Predicting again with the threshold found gives what it promised.
  again = v2_metrics(results["best_f1_thresh"])
  assert again["f1"] == results["best_f1"]
  assert again["best_f1_thresh"] == 1.2


def test_equal_null_odds_switch_together():
  examples = [example("a", "x"), example("b")]
  results = metrics.squad_v2_metrics(
      examples, {"a": "", "b": ""}, {"a": 1.0, "b": 1.0},
      {"a": "x", "b": "y"})
  # A threshold of 1.0 answers both (1 right); below, neither (1 right):
  # the official loop would claim 2 right at 1.0.
  assert results["best_f1"] == pytest.approx(50.0)
  assert results["best_f1_thresh"] < 1.0


def test_answering_nothing_can_be_best():
  examples = [example("a"), example("b")]
  results = metrics.squad_v2_metrics(
      examples, {"a": "", "b": ""}, {"a": -3.0, "b": 2.0},
      {"a": "x", "b": "y"})
  assert results["best_f1"] == 100.0
  assert results["best_f1_thresh"] < -3.0
  assert "HasAns_total" not in results
