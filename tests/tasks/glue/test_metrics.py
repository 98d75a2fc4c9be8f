"""GLUE metrics, recomputed by hand on small cases."""

import math

import numpy as np
import pytest

from bert_tf.tasks.glue.examples import get_task
from bert_tf.tasks.glue.metrics import glue_metrics


def one_hot_probabilities(predicted, confidence=0.8):
  probabilities = np.full((len(predicted), 2), 1 - confidence)
  probabilities[np.arange(len(predicted)), predicted] = confidence
  return probabilities


def test_cola_matthews_correlation():
  labels = np.array([1, 1, 1, 0, 0, 0])
  predicted = np.array([1, 1, 0, 0, 0, 1])
  results = glue_metrics(get_task("cola"), {"probabilities": one_hot_probabilities(
      predicted)}, labels, batch_size=4)
  # tp=2 tn=2 fp=1 fn=1: (4 - 1) / sqrt(3 * 3 * 3 * 3) = 1/3
  assert results["matthews_corrcoef"] == pytest.approx(1 / 3)
  assert results["eval_accuracy"] == pytest.approx(4 / 6)
  # four right at -log 0.8, two wrong at -log 0.2
  assert results["eval_loss"] == pytest.approx(
      (4 * -math.log(0.8) + 2 * -math.log(0.2)) / 6)
  # batches [1,1,0,0 -> right,right,wrong,right] and [0,1 -> right,wrong]
  batch_1 = (3 * -math.log(0.8) - math.log(0.2)) / 4
  batch_2 = (-math.log(0.8) - math.log(0.2)) / 2
  assert results["loss"] == pytest.approx((batch_1 + batch_2) / 2)
  assert "f1" not in results


@pytest.mark.parametrize("task_name", ["mrpc", "qqp"])
def test_f1_for_paraphrase_tasks(task_name):
  labels = np.array([1, 1, 1, 0, 0])
  predicted = np.array([1, 0, 1, 1, 0])
  results = glue_metrics(get_task(task_name), {"probabilities": one_hot_probabilities(
      predicted)}, labels, batch_size=8)
  # precision 2/3, recall 2/3
  assert results["f1"] == pytest.approx(2 / 3)
  assert "matthews_corrcoef" not in results


def test_sts_b_correlations():
  labels = np.array([0.0, 1.0, 2.0, 3.0])
  predictions = np.array([0.0, 2.0, 1.0, 3.0])
  results = glue_metrics(get_task("sts-b"), {"predictions": predictions}, labels,
                         batch_size=2)
  assert results["pearson"] == pytest.approx(0.8)   # cov 1 / var 1.25
  assert results["spearman"] == pytest.approx(0.8)  # ranks alike here
  assert results["eval_loss"] == pytest.approx(0.5)
  assert "eval_accuracy" not in results
