"""model.ckpt-<step> files and the `checkpoint` index, as the original's Saver.

The original wrote model.ckpt-<step> every save_checkpoints_steps, kept the
newest few and listed them in a `checkpoint` text file that
tf.train.latest_checkpoint reads. A run started again in the same directory
resumes from the newest: weights, adam_m/adam_v slots and global_step.
"""

import logging
import os
import re

from bert_tf.checkpoints import model_weights
from bert_tf.checkpoints.original import checkpoint_writer
from bert_tf.checkpoints.original import tf_checkpoints
from bert_tf.checkpoints.names import GLOBAL_STEP
from bert_tf.files import atomic_outputs, storage

logger = logging.getLogger(__name__)

STATE_FILE = "checkpoint"  # the index the original's Saver writes
_STEP = re.compile(r"model\.ckpt-\d+\.index")


def _listing(names, most=3):
  shown = ", ".join(names[:most])
  return shown + (f" and {len(names) - most} more" if len(names) > most
                  else "")


def is_run_checkpoint(prefix):
  """Whether a checkpoint prefix is named as a run saves its own
  (model.ckpt-<step>), not as a release (bert_model.ckpt)."""
  return bool(_STEP.fullmatch(f"{os.path.basename(prefix)}.index"))


def checkpoint_names(directory):
  """The model.ckpt-<step> names a run in `directory` resumes from, oldest
  first: those the `checkpoint` index lists that still exist.

  Without a readable index (deleted, or never written by a run killed just
  after its first save), the model.ckpt-<step> files there are used, so that
  their training is resumed rather than overwritten.
  """
  names = []
  state = os.path.join(directory, STATE_FILE)
  if storage.exists(state):
    with storage.open_file(state) as reader:
      for line in reader:
        key, _, value = line.partition(":")
        if key.strip() == "all_model_checkpoint_paths":
          names.append(os.path.basename(value.strip().strip('"')))
  listed = [name for name in names
            if storage.exists(os.path.join(directory, f"{name}.index"))]
  if listed:
    return listed
  found = sorted(
      (os.path.basename(path)[:-len(".index")] for path in storage.glob(
          os.path.join(directory, "model.ckpt-*.index"))
       if _STEP.fullmatch(os.path.basename(path))),
      key=lambda name: int(name.rpartition("-")[2]))
  if found:
    logger.warning("%s lists no checkpoint; using the model.ckpt-<step> "
                   "files there: %s", state, ", ".join(found))
  return found


def _global_step(reader, prefix):
  """A checkpoint's global_step (0 where it has none)."""
  if GLOBAL_STEP not in reader.get_variable_to_shape_map():
    return 0
  return int(model_weights.read_tensors(reader, prefix,
                                         [GLOBAL_STEP])[GLOBAL_STEP])


class CheckpointManager:
  """Saves and restores a model with its AdamWeightDecay optimizer.

  Args:
    model: a bert_tf model.
    optimizer: an optimizer with slots(variable), e.g. AdamWeightDecay.
    directory: the output_dir.
    keep_checkpoint_max: how many of the newest checkpoints to keep.
  """

  def __init__(self, model, optimizer, directory, keep_checkpoint_max=5):
    self.model = model
    self.optimizer = optimizer
    self.directory = directory
    self.keep_checkpoint_max = keep_checkpoint_max
    self.kept = checkpoint_names(directory)

  def save(self, step):
    """Writes model.ckpt-<step>, updates the index, drops the oldest."""
    name = f"model.ckpt-{step}"
    atomic_outputs.remove_stale_temporaries(self.directory, r"model\.ckpt-\d+")
    checkpoint_writer.save_checkpoint(
        self.model, os.path.join(self.directory, name),
        global_step=step, optimizer=self.optimizer)
    self.kept = [kept for kept in self.kept if kept != name] + [name]
    dropped, self.kept = (self.kept[:-self.keep_checkpoint_max],
                          self.kept[-self.keep_checkpoint_max:])
    self._write_state()
    for old in dropped:
      for path in storage.glob(os.path.join(self.directory, f"{old}.*")):
        storage.remove(path)
    logger.info("Saved %s", name)
    return os.path.join(self.directory, name)

  def restore_latest(self, slots=True):
    """Loads the newest intact checkpoint listed in the index, if any.

    A damaged one (truncated or corrupt files, e.g. from a full disk) is
    skipped with a warning for the one before it, and dropped from the
    index, so the same command recovers instead of failing forever.

    Args:
      slots: whether the optimizer's slots are restored too (to train on);
        without them, a model that trains other variables than the
        checkpoint's run did (LoRA adapters or not) evaluates it.

    Returns:
      Its global_step, or 0 when the directory has no checkpoint yet.

    Raises:
      ValueError: a checkpoint there is of another model (missing or
        differently shaped variables or slots), or every one is damaged.
    """
    damaged = []
    for name in reversed(self.kept):
      path = os.path.join(self.directory, name)
      try:
        step = self._restore(path, slots)
      except model_weights.CorruptCheckpointError as error:
        logger.warning("%s; trying the checkpoint before it", error)
        damaged.append(name)
        continue
      self.kept = [kept for kept in self.kept if kept not in damaged]
      logger.info("Resumed from %s at step %d", path, step)
      return step
    if damaged:
      raise model_weights.CorruptCheckpointError(
          f"{self.directory}: every checkpoint is damaged "
          f"({', '.join(damaged)}); remove them (and the '{STATE_FILE}' "
          f"file) to start again from --init_checkpoint")
    return 0

  def trained_weights(self):
    """The paths of the model's weights that the newest readable checkpoint
    holds optimizer slots for: those its run trained (the original writes
    none for the others), read from its index alone, before the model
    has adapters (a LoRA run trains them again beside its new adapters).
    [] where no checkpoint can be read (restore_latest names them)."""
    for name in reversed(self.kept):
      try:
        shapes = tf_checkpoints.open_reader(os.path.join(
            self.directory, name)).get_variable_to_shape_map()
      except model_weights.CorruptCheckpointError:
        continue
      slot = model_weights.SLOT_SUFFIXES[0]
      return [variable.path for checkpoint_name, variable in
              model_weights.checkpoint_variables(self.model).items()
              if f"{checkpoint_name}/{slot}" in shapes]
    return []

  def _restore(self, path, slots):
    """Weights, step and, where `slots`, slots from one checkpoint, all of
    them required."""
    try:
      reader = tf_checkpoints.open_reader(path)
      report = model_weights.load_weights(self.model, reader, path)
      if report.not_in_checkpoint:
        raise ValueError(f"it lacks {_listing(report.not_in_checkpoint)}")
      step = tf_checkpoints.load_optimizer_slots(
          self.model, self.optimizer, reader, path) if slots else \
          _global_step(reader, path)
    except model_weights.CorruptCheckpointError:
      raise
    except ValueError as error:
      files = "model.ckpt-*" if is_run_checkpoint(path) else \
          f"{os.path.basename(path)}.*"
      raise ValueError(
          f"{path} is a checkpoint of another model ({error}); to start "
          f"this run fresh, remove the {files} and '{STATE_FILE}' files "
          f"from {self.directory} or choose another --output_dir") from None
    self.optimizer.iterations.assign(step)
    return step

  def _write_state(self):
    """The index as the original's Saver writes it, atomically."""
    lines = [f'model_checkpoint_path: "{self.kept[-1]}"']
    lines += [f'all_model_checkpoint_paths: "{name}"' for name in self.kept]
    state = os.path.join(self.directory, STATE_FILE)
    with atomic_outputs.atomic_write(state) as writer:
      writer.write("\n".join(lines) + "\n")
