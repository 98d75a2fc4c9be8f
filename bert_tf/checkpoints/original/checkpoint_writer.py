"""Writing the original TF1 checkpoint format: a model's variables (and its
optimizer's slots, global_step) under the original names, written whole."""

import logging

import tensorflow as tf

from bert_tf.checkpoints.adapters import merged_kernels
from bert_tf.checkpoints.names import GLOBAL_STEP
from bert_tf.checkpoints.model_weights import (SLOT_SUFFIXES,
                                               checkpoint_variables)
from bert_tf.files import atomic_outputs, storage

logger = logging.getLogger(__name__)


def as_tensor(value):
  """A numpy array as a tensor to write, owning one buffer: tf.identity's
  result (one converted from numpy holds two: a converted BERT-Large then
  peaks at 3.4 GB instead of 2.2, benchmarks/convert_checkpoint.py)."""
  return tf.identity(value)


def write_checkpoint(path, tensors):
  """Writes {name: tensor} as a TF1 name-based checkpoint at prefix `path`.

  The files are written under a held temporary prefix (atomic_outputs) and
  renamed into place, data first and index last, so a reader never sees a
  half-written checkpoint and a killed writer's leftovers can be told from a
  live one's.
  """
  directory = path.rpartition("/")[0]
  if directory:
    storage.makedirs(directory)
  names = list(tensors)
  with atomic_outputs.held_temporary(path) as temporary:
    tf.raw_ops.SaveV2(
        prefix=temporary,
        tensor_names=names,
        shape_and_slices=[""] * len(names),
        tensors=[tensors[name] for name in names])
    suffixes = [name[len(temporary):] for name in storage.glob(
        f"{storage.glob_escape(temporary)}.data-*")]
    for suffix in suffixes + [".index"]:
      atomic_outputs.check_replaceable(f"{path}{suffix}")
    for suffix in suffixes + [".index"]:
      storage.rename(f"{temporary}{suffix}", f"{path}{suffix}")


def _check_floats(variables):
  """Raises ValueError at the first of {name: variable} that is not
  floating point: a quantized kernel (int8, int4 packed), which no BERT
  loader reads as a weight."""
  for name, variable in variables.items():
    dtype = tf.as_dtype(variable.dtype)
    if not dtype.is_floating:
      raise ValueError(f"save_checkpoint: the model's {name} is "
                       f"{dtype.name} (quantized); a checkpoint holds float "
                       "weights: save it before quantize()")


def save_checkpoint(model, path, global_step=None, optimizer=None):
  """Saves a bert_tf model under the original names, shapes and dtypes.

  Args:
    model: a bert_tf model (see checkpoint_variables).
    path: checkpoint prefix to write, e.g. "out/model.ckpt-1000".
    global_step: the int64 `global_step` to store. The original always writes
      one, so None writes 0.
    optimizer: an optimizer with `slots(variable)` -> (adam_m, adam_v), such
      as bert_tf.optimization.optimizers.AdamWeightDecay; the slots of the
      trainable variables are saved as <name>/adam_m and <name>/adam_v, as
      the original's.

  A kernel with LoRA adapters is saved with them merged in; the adapters
  themselves are not saved (load_checkpoint starts them again).

  Returns:
    `path`.
  """
  variables = checkpoint_variables(model)
  _check_floats(variables)
  tensors = {}
  merged = merged_kernels(model)
  for name, variable in variables.items():
    tensors[name] = tf.convert_to_tensor(merged.get(id(variable), variable))
    if optimizer is not None and variable.trainable:
      for suffix, slot in zip(SLOT_SUFFIXES, optimizer.slots(variable)):
        tensors[f"{name}/{suffix}"] = tf.convert_to_tensor(slot)
  tensors[GLOBAL_STEP] = tf.constant(global_step or 0, dtype=tf.int64)
  write_checkpoint(path, tensors)
  logger.info("Saved %d variables to %s", len(tensors), path)
  return path
