"""run_classifier's eval_results: the original's keys plus each GLUE task's
official metric (scikit-learn and SciPy compute them).

Original keys: eval_accuracy, eval_loss and loss (tasks/classification.py);
the runner adds global_step. GLUE's: the task's `metric` (Matthews
correlation for CoLA, F1 for MRPC and QQP), Pearson and Spearman
correlations for a regression task (STS-B).
"""

import numpy as np
from scipy import stats
from sklearn import metrics

from bert_tf.tasks.classification import batch_mean, classification_metrics

# Task.metric -> the scikit-learn function of (labels, predicted labels).
_METRICS = {"matthews_corrcoef": metrics.matthews_corrcoef,
            "f1": metrics.f1_score}


def glue_metrics(task, predictions, label_ids, batch_size):
  """eval_results for one dev set.

  Args:
    task: the glue Task (its labels, whether it regresses, its metric).
    predictions: the model's outputs on the dev set: probabilities
      [n, classes], or predictions [n] for a regressor.
    label_ids: [n] label indices (float scores for a regressor).
    batch_size: the eval batch size, for the original's batch-mean "loss".
  """
  if task.is_regression:
    scores = predictions["predictions"]
    losses = np.square(scores - label_ids)
    return {
        "eval_loss": float(losses.mean()),
        "loss": batch_mean(losses, batch_size),
        "pearson": float(stats.pearsonr(scores, label_ids)[0]),
        "spearman": float(stats.spearmanr(scores, label_ids)[0]),
    }
  probabilities = predictions["probabilities"]
  results = classification_metrics(probabilities, label_ids, batch_size)
  if task.metric:
    results[task.metric] = float(_METRICS[task.metric](
        label_ids, probabilities.argmax(axis=-1)))
  return results
