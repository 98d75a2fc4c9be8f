"""Training progress in the log: step, loss, examples/sec and ETA."""

import datetime
import logging
import time

logger = logging.getLogger(__name__)


class Progress:
  """Logs one line per training loop.

  Args:
    start_step: the global step training starts (or resumes) from.
    num_train_steps: the last step.
    batch_size: examples per step (the global batch).
  """

  def __init__(self, start_step, num_train_steps, batch_size):
    self.num_train_steps = num_train_steps
    self.batch_size = batch_size
    self._start_step = self._step = start_step
    self._start_time = self._time = time.time()
    self.examples_per_sec = 0.0

  def log(self, step, results):
    """Logs `step` with the loop's results ({name: float}, "loss" first;
    none for work without a loss, extract_features' lines)."""
    now = time.time()
    self.examples_per_sec = ((step - self._step) * self.batch_size
                             / max(now - self._time, 1e-9))
    # The ETA uses the rate since the start, steadier than the last loop's.
    overall = (step - self._start_step) / max(now - self._start_time, 1e-9)
    remaining = (self.num_train_steps - step) / overall if overall else 0.0
    self._step, self._time = step, now
    metrics = " ".join(f"{name} {value:.4f}" if name == "loss"
                       else f"{name} {value:.4g}"
                       for name, value in results.items())
    logger.info("step %d/%d %s (%.1f examples/sec, ETA %s)", step,
                self.num_train_steps, metrics, self.examples_per_sec,
                datetime.timedelta(seconds=round(remaining)))
