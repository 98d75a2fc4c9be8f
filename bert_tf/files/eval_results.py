"""eval_results.txt, as the original writes it: `key = value` lines, keys
sorted, each value as the original's Estimator printed it."""

import logging

import numpy as np

from bert_tf.files import atomic_outputs

logger = logging.getLogger(__name__)


def write_eval_results(path, results):
  """eval_results.txt as the original: `key = value`, keys sorted."""
  with atomic_outputs.atomic_write(path) as writer:
    writer.write(eval_results_text(results))


def eval_results_text(results):
  """The text of eval_results.txt (logged as it is made)."""
  lines = [f"{key} = {_original_str(results[key])}" for key in sorted(results)]
  for line in lines:
    logger.info("  %s", line)
  return "\n".join(lines) + "\n"


def _original_str(value):
  """str() of the numpy scalar the original's Estimator returned (float32);
  a numpy float64, a metric computed exactly (SQuAD's thresholds, which a
  user passes back as a flag), keeps every digit."""
  if isinstance(value, int) or type(value) is np.float64:
    return str(value)
  return str(np.float32(value))
