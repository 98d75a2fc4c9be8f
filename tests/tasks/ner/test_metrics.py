"""Entity F1 against conlleval's counts: worked out by hand, and
conlleval.pl's own on random tags."""

import json
import os

import pytest

from bert_tf.tasks.ner.metrics import entity_metrics
from tests.support.helpers import PROJECT_DIR

# John Smith visited Paris London . / Tarrow Union of Elvish
IOB1_GOLD = [["I-PER", "I-PER", "O", "I-LOC", "B-LOC", "O"],
             ["I-ORG", "I-ORG", "O", "I-MISC"]]
IOB1_PREDICTED = [["I-PER", "I-PER", "O", "I-LOC", "I-LOC", "O"],
                  ["I-ORG", "O", "O", "I-MISC"]]
IOB2_GOLD = [["B-PER", "I-PER", "O", "B-LOC", "B-LOC", "O"],
             ["B-ORG", "I-ORG", "O", "B-MISC"]]
IOB2_PREDICTED = [["B-PER", "I-PER", "O", "B-LOC", "I-LOC", "O"],
                  ["B-ORG", "O", "O", "B-MISC"]]


@pytest.mark.parametrize("gold,predicted", [
    (IOB1_GOLD, IOB1_PREDICTED), (IOB2_GOLD, IOB2_PREDICTED),
    (IOB1_GOLD, IOB2_PREDICTED)])
def test_conllevals_counts(gold, predicted):
  """Gold: PER[0-1], LOC[3], LOC[4] | ORG[0-1], MISC[3] (5 entities).
  Predicted: PER[0-1], LOC[3-4] | ORG[0], MISC[3] (4). Right: PER, MISC."""
  results = entity_metrics(gold, predicted)
  assert results == pytest.approx({
      "eval_precision": 2 / 4, "eval_recall": 2 / 5,
      "eval_f1": 2 * 0.5 * 0.4 / 0.9,
      "eval_PER_precision": 1.0, "eval_PER_recall": 1.0, "eval_PER_f1": 1.0,
      "eval_LOC_precision": 0.0, "eval_LOC_recall": 0.0, "eval_LOC_f1": 0.0,
      "eval_ORG_precision": 0.0, "eval_ORG_recall": 0.0, "eval_ORG_f1": 0.0,
      "eval_MISC_precision": 1.0, "eval_MISC_recall": 1.0,
      "eval_MISC_f1": 1.0})


def test_ill_formed_predictions_are_read_as_conlleval_reads_them():
  """I- after O or after another type starts an entity; B- always does."""
  results = entity_metrics([["B-PER", "I-PER", "B-LOC"]],
                           [["O", "I-PER", "I-LOC"]])
  # Predicted PER[1], LOC[2]: LOC right, PER not.
  assert results["eval_precision"] == 0.5
  assert results["eval_recall"] == 0.5
  assert results["eval_LOC_f1"] == 1.0 and results["eval_PER_f1"] == 0.0


def test_types_seen_only_in_predictions_are_listed_and_none_is_zero():
  results = entity_metrics([["O", "O"]], [["I-MISC", "O"]])
  assert results == {"eval_MISC_precision": 0.0, "eval_MISC_recall": 0.0,
                     "eval_MISC_f1": 0.0, "eval_precision": 0.0,
                     "eval_recall": 0.0, "eval_f1": 0.0}
  assert entity_metrics([["O"]], [["O"]]) == {
      "eval_precision": 0.0, "eval_recall": 0.0, "eval_f1": 0.0}


def test_equal_to_conlleval_on_random_tags():
  """300 random cases, ill-formed tags included, scored by conlleval.pl
  itself (tests/fixtures/conll/make_reference.py)."""
  with open(os.path.join(PROJECT_DIR, "tests", "fixtures", "conll",
                         "conlleval_outputs.json"), encoding="utf-8") as file:
    cases = json.load(file)["cases"]
  assert len(cases) == 300
  for case in cases:
    gold = [pair[0] for pair in case["sentences"]]
    predicted = [pair[1] for pair in case["sentences"]]
    results = entity_metrics(gold, predicted)
    counts = case["conlleval"]
    precision = counts["correct"] / counts["found"] if counts["found"] else 0
    recall = (counts["correct"] / counts["gold_entities"]
              if counts["gold_entities"] else 0)
    assert results["eval_precision"] == pytest.approx(precision), case
    assert results["eval_recall"] == pytest.approx(recall), case
    types = {key.split("_")[1] for key in results if key.count("_") == 2}
    assert types == set(counts["types_percent"]), case
    for name, figures in counts["types_percent"].items():
      # conlleval prints percentages with two decimals.
      assert [results[f"eval_{name}_{figure}"] for figure in
              ("precision", "recall", "f1")] == pytest.approx(
                  [value / 100 for value in figures], abs=6e-5), case
