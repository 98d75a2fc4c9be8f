"""run_classifier's eval_results: the original's keys plus each GLUE task's
official metric (scikit-learn and SciPy compute them).

Original keys: eval_accuracy and eval_loss (over the real examples),
loss (the mean of each eval batch's mean loss, as the Estimator reported
it), global_step. GLUE's: Matthews correlation for CoLA, F1 for MRPC and
QQP, Pearson and Spearman correlations for STS-B.
"""

import numpy as np
from scipy import stats
from sklearn import metrics

_F1_TASKS = ("mrpc", "qqp")


def glue_metrics(task_name, outputs, label_ids, batch_size):
  """eval_results for one dev set.

  Args:
    task_name: the glue task name ("cola", "sts-b", ...).
    outputs: Trainer.predict's outputs: probabilities [n, classes], or
      predictions [n] for a regressor.
    label_ids: [n] label indices (float scores for STS-B).
    batch_size: the eval batch size, for the original's batch-mean "loss".
  """
  if "predictions" in outputs:
    predictions = outputs["predictions"]
    losses = np.square(predictions - label_ids)
    return {
        "eval_loss": float(losses.mean()),
        "loss": _batch_mean(losses, batch_size),
        "pearson": float(stats.pearsonr(predictions, label_ids)[0]),
        "spearman": float(stats.spearmanr(predictions, label_ids)[0]),
    }
  results = classification_metrics(outputs["probabilities"], label_ids,
                                   batch_size)
  predicted = outputs["probabilities"].argmax(axis=-1)
  if task_name == "cola":
    results["matthews_corrcoef"] = float(
        metrics.matthews_corrcoef(label_ids, predicted))
  if task_name in _F1_TASKS:
    results["f1"] = float(metrics.f1_score(label_ids, predicted))
  return results


def classification_metrics(probabilities, label_ids, batch_size):
  """run_classifier's eval_accuracy, eval_loss and loss of class (or
  choice, SWAG's) probabilities [n, classes] against label_ids [n]."""
  predicted = probabilities.argmax(axis=-1)
  losses = -np.log(np.maximum(
      probabilities[np.arange(len(label_ids)), label_ids], 1e-30))
  return {
      "eval_accuracy": float(metrics.accuracy_score(label_ids, predicted)),
      "eval_loss": float(losses.mean()),
      "loss": _batch_mean(losses, batch_size),
  }


def _batch_mean(losses, batch_size):
  """The mean of each eval batch's mean loss, as the Estimator's "loss"."""
  return float(np.mean([losses[start:start + batch_size].mean()
                        for start in range(0, len(losses), batch_size)]))
