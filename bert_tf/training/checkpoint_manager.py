"""model.ckpt-<step> files and the `checkpoint` index, as the original's Saver.

The original wrote model.ckpt-<step> every save_checkpoints_steps, kept the
newest few and listed them in a `checkpoint` text file that
tf.train.latest_checkpoint reads. A run started again in the same directory
resumes from the newest: weights, adam_m/adam_v slots and global_step.
"""

import logging
import os

from bert_tf import checkpoints, file_io

logger = logging.getLogger(__name__)

class CheckpointManager:
  """Saves and restores a model with its AdamWeightDecay optimizer.

  Args:
    model: a bert_tf model.
    optimizer: an optimizer with slots(variable), e.g. AdamWeightDecay.
    directory: the output_dir.
    keep_checkpoint_max: how many of the newest checkpoints to keep.
  """

  STATE_FILE = "checkpoint"  # the index the original's Saver writes

  def __init__(self, model, optimizer, directory, keep_checkpoint_max=5):
    self.model = model
    self.optimizer = optimizer
    self.directory = directory
    self.keep_checkpoint_max = keep_checkpoint_max
    self.kept = self._listed_checkpoints()

  def save(self, step):
    """Writes model.ckpt-<step>, updates the index, drops the oldest."""
    name = f"model.ckpt-{step}"
    checkpoints.save_checkpoint(self.model, os.path.join(self.directory, name),
                                global_step=step, optimizer=self.optimizer)
    self.kept = [kept for kept in self.kept if kept != name] + [name]
    dropped, self.kept = (self.kept[:-self.keep_checkpoint_max],
                          self.kept[-self.keep_checkpoint_max:])
    self._write_state()
    for old in dropped:
      for path in file_io.glob(os.path.join(self.directory, f"{old}.*")):
        file_io.remove(path)
    logger.info("Saved %s", name)
    return os.path.join(self.directory, name)

  def restore_latest(self):
    """Loads the newest checkpoint listed in the index, if any.

    Returns:
      Its global_step, or 0 when the directory has no checkpoint yet.
    """
    if not self.kept:
      return 0
    path = os.path.join(self.directory, self.kept[-1])
    checkpoints.load_checkpoint(self.model, path)
    step = checkpoints.load_optimizer_slots(self.model, self.optimizer, path)
    self.optimizer.iterations.assign(step)
    logger.info("Resumed from %s at step %d", path, step)
    return step

  def _listed_checkpoints(self):
    """Names in the index file, oldest first, that still exist."""
    state = os.path.join(self.directory, self.STATE_FILE)
    if not file_io.exists(state):
      return []
    names = []
    with file_io.open_file(state) as reader:
      for line in reader:
        key, _, value = line.partition(":")
        if key.strip() == "all_model_checkpoint_paths":
          names.append(os.path.basename(value.strip().strip('"')))
    return [name for name in names if file_io.exists(
        os.path.join(self.directory, f"{name}.index"))]

  def _write_state(self):
    """The index as the original's Saver writes it, atomically."""
    lines = [f'model_checkpoint_path: "{self.kept[-1]}"']
    lines += [f'all_model_checkpoint_paths: "{name}"' for name in self.kept]
    state = os.path.join(self.directory, self.STATE_FILE)
    with file_io.atomic_write(state) as writer:
      writer.write("\n".join(lines) + "\n")
