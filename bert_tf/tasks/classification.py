"""What the tasks that choose among classes share (GLUE's and SWAG's
endings): run_classifier's eval_results keys and its test_results.tsv."""

import numpy as np
from sklearn import metrics


def classification_metrics(probabilities, label_ids, batch_size):
  """run_classifier's eval_accuracy, eval_loss and loss of class (or
  choice) probabilities [n, classes] against label_ids [n].

  eval_accuracy and eval_loss are over the real examples; loss is the mean
  of each eval batch's mean loss, as the original's Estimator reported it.
  """
  predicted = probabilities.argmax(axis=-1)
  losses = -np.log(np.maximum(
      probabilities[np.arange(len(label_ids)), label_ids], 1e-30))
  return {
      "eval_accuracy": float(metrics.accuracy_score(label_ids, predicted)),
      "eval_loss": float(losses.mean()),
      "loss": batch_mean(losses, batch_size),
  }


def batch_mean(losses, batch_size):
  """The mean of each eval batch's mean loss, as the Estimator's "loss"."""
  return float(np.mean([losses[start:start + batch_size].mean()
                        for start in range(0, len(losses), batch_size)]))


def write_probabilities(writer, rows):
  """One line per row, its values tab-separated as the original prints
  them (str of a float32): run_classifier's test_results.tsv."""
  for row in rows:
    writer.write("\t".join(str(np.float32(value)) for value in row) + "\n")
