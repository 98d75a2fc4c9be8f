"""The original TF1 checkpoint format, read: a directory's newest
checkpoint, its reader with damaged files named, and the optimizer slots
a run's own checkpoint holds (a run resumed)."""

import os

import tensorflow as tf

from bert_tf.checkpoints.model_weights import (SLOT_SUFFIXES,
                                               CorruptCheckpointError,
                                               checkpoint_variables,
                                               first_line,
                                               read_tensors,
                                               trained_variables)
from bert_tf.checkpoints.names import GLOBAL_STEP
from bert_tf.files import storage


def resolve_checkpoint_path(path):
  """A checkpoint prefix from a prefix or a directory, as the original took
  --init_checkpoint: a directory's newest checkpoint by its `checkpoint`
  index file, else the one checkpoint it holds (bert_model.ckpt as
  released, or model.ckpt-N as community checkpoints ship).

  Raises:
    FileNotFoundError: no checkpoint there, or several and no index.
  """
  if not storage.isdir(path):
    if not storage.exists(f"{path}.index"):
      raise FileNotFoundError(f"{path}: no checkpoint here (expected "
                              f"{path}.index and {path}.data-*)")
    return path
  _check_regular_file(os.path.join(path, "checkpoint"))
  latest = tf.train.latest_checkpoint(path)
  if latest is not None:
    return latest
  prefixes = sorted(name[:-len(".index")] for name in storage.glob(
      os.path.join(storage.glob_escape(path), "*.index")))
  if len(prefixes) == 1:
    return prefixes[0]
  if not prefixes:
    raise FileNotFoundError(f"{path}: a directory without a checkpoint (no "
                            f"*.index file)")
  raise FileNotFoundError(
      f"{path}: several checkpoints and no 'checkpoint' index file to say "
      f"which is newest; name one: "
      f"{', '.join(prefix.rpartition('/')[2] for prefix in prefixes)}")


def open_reader(prefix):
  """tf.train.load_checkpoint's reader of the checkpoint's tensors by
  original name, with a damaged checkpoint named."""
  for path in storage.glob(f"{storage.glob_escape(prefix)}.*"):
    _check_regular_file(path)
  try:
    return tf.train.load_checkpoint(prefix)
  except (tf.errors.OpError, ValueError) as error:
    raise CorruptCheckpointError(
        f"{prefix}: cannot read the checkpoint, it is truncated or damaged "
        f"({first_line(error)})") from None


def _check_regular_file(path):
  """A checkpoint's file that is a FIFO or a device would hang or flood
  its reader: refused, named."""
  kind = storage.kind_of_file(path)
  if kind is not None:
    raise ValueError(f"{path} is {kind}, not a checkpoint file")


def load_optimizer_slots(model, optimizer, reader, prefix):
  """Restores <name>/adam_m and <name>/adam_v into the optimizer's slots
  from a TF1 checkpoint's reader (open_reader(prefix)'s).

  Returns:
    The checkpoint's global_step (0 when it has none).

  Raises:
    CorruptCheckpointError: its files are truncated or damaged.
    ValueError: a slot is missing or has another shape.
  """
  stored_shapes = reader.get_variable_to_shape_map()
  variables = checkpoint_variables(model)
  optimizer.build(list(trained_variables(variables).values()))
  slots = {}
  for name, variable in trained_variables(variables).items():
    for suffix, slot in zip(SLOT_SUFFIXES, optimizer.slots(variable)):
      slot_name = f"{name}/{suffix}"
      if list(stored_shapes.get(slot_name, [])) != list(slot.shape):
        raise ValueError(f"{prefix}: optimizer slot {slot_name} is missing "
                         f"or not shaped {list(slot.shape)}")
      slots[slot_name] = slot
  step = [GLOBAL_STEP] if GLOBAL_STEP in stored_shapes else []
  values = read_tensors(reader, prefix, list(slots) + step)
  for slot_name, slot in slots.items():
    slot.assign(values[slot_name])
  return int(values[GLOBAL_STEP]) if step else 0
