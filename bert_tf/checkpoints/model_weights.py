"""A bert_tf model's variables by their original checkpoint names, and
loading them from any checkpoint's reader (load_weights): every format's
reader answers tf.train.CheckpointReader's questions under the original
names.

Released BERT checkpoints are TF1 name-based checkpoints ("bert/encoder/
layer_0/attention/self/query/kernel", ...). Keras 3 forbids "/" in layer
names, so compatibility cannot come from naming layers; instead tables
(names.encoder_names, and each model's checkpoint_head_names) map every
original name to the attribute path of the Keras variable. All weights keep
the original shapes, so no reshape or transpose is needed.
"""

import dataclasses
import logging

import tensorflow as tf

from bert_tf.checkpoints.adapters import adapted_layers, restart_adapters
from bert_tf.checkpoints.head_rows import rows_by_label, without_other_heads
from bert_tf.checkpoints.names import (GLOBAL_STEP, check_encoder_fits,
                                       encoder_names)

logger = logging.getLogger(__name__)

# Optimizer slots the original writes beside each variable (name/adam_m).
SLOT_SUFFIXES = ("adam_m", "adam_v")


def _resolve(model, path):
  """Follows an attribute path such as 'transformer_layers.0.attention'; a
  Dense layer's kernel is its variable (Keras' `kernel` of a layer with
  LoRA adapters is a tensor, the kernel with the adapters merged)."""
  target = model
  for part in path.split("."):
    if part == "kernel" and getattr(target, "lora_enabled", False):
      return target._kernel  # pylint: disable=protected-access
    target = target[int(part)] if part.isdigit() else getattr(target, part)
  return target


def checkpoint_variables(model):
  """{original checkpoint name: Keras variable} for a bert_tf model.

  A model declares its own names: a class attribute (or a property, where
  they depend on its arguments) `checkpoint_head_names` ({original name:
  attribute path from the model}, e.g. {"output_weights":
  "output_head.output_weights"}) for its heads, and its BertEncoder as
  `.encoder` (a BertEncoder is its own encoder and declares no heads). The
  encoder's names are names.encoder_names.

  Raises:
    TypeError: the model declares no checkpoint_head_names.
  """
  head_names = getattr(model, "checkpoint_head_names", None)
  if head_names is None:
    raise TypeError(
        f"No checkpoint name map for {type(model).__name__}: a bert_tf model "
        f"declares `checkpoint_head_names = {{original name: attribute "
        f"path}}` and keeps its BertEncoder as `.encoder`")
  encoder = getattr(model, "encoder", model)
  variables = {name: _resolve(encoder, path)
               for name, path in encoder_names(encoder.config).items()}
  variables.update({name: _resolve(model, path)
                    for name, path in head_names.items()})
  return variables



@dataclasses.dataclass
class LoadReport:
  """What load_checkpoint did, so callers can check or log it.

  Attributes:
    checkpoint: the checkpoint prefix read.
    loaded: original names whose values were loaded.
    not_in_checkpoint: names the model has but the checkpoint lacks; those
      variables keep their initialisation (e.g. heads when loading an
      encoder-only checkpoint).
    unused: checkpoint names that match no model variable.
    ignored: global_step and optimizer slots, which weights never load from.
  """
  checkpoint: str
  loaded: list
  not_in_checkpoint: list
  unused: list
  ignored: list


class CorruptCheckpointError(ValueError):
  """A checkpoint whose files are truncated, damaged or missing."""


def check_floats(reader, prefix, names):
  """Raises ValueError naming the first of `names` that is not floating
  point: a cast would load an integer or boolean tensor as numbers it
  never held as weights, and a string one cannot load at all."""
  dtypes = reader.get_variable_to_dtype_map()
  for name in names:
    dtype = tf.as_dtype(dtypes[name])
    if not dtype.is_floating:
      raise ValueError(f"{prefix}: variable {name} is {dtype.name}, not "
                       f"floating point; BERT's weights are floats")


def read_tensors(reader, prefix, names, convert=None):
  """{name: numpy value, or convert(value)}, every one read before any is
  used, so that a damaged file is found before a model is half assigned
  or an output half written."""
  values = {}
  for name in names:
    try:
      values[name] = reader.get_tensor(name)
      if convert is not None:
        values[name] = convert(values[name])
    except (tf.errors.OpError, IndexError, ValueError) as error:
      raise CorruptCheckpointError(
          f"{prefix}: cannot read variable {name}, the checkpoint's data "
          f"file is truncated or damaged ({first_line(error)})") from None
  return values


def first_line(error):
  """An error's first line, for a one-line message."""
  message = getattr(error, "message", None) or str(error)
  return message.strip().splitlines()[0] if message.strip() else \
      type(error).__name__


def _is_ignored(name, model_names):
  if name == GLOBAL_STEP:
    return True
  owner, _, suffix = name.rpartition("/")
  return suffix in SLOT_SUFFIXES and owner in model_names


def load_weights(model, reader, where, new_head=False, named_labels=None):
  """Loads a checkpoint's tensors, by original name, into a bert_tf model.

  Every shape is checked and every value read before anything is assigned,
  so a mismatched or damaged checkpoint leaves the model untouched. A model
  that names its head's labels (`labels`, e.g. a BertTagger's) takes a
  labelled head's rows by name (see rows_by_label).

  Args:
    model: a bert_tf model (see checkpoint_variables).
    reader: the checkpoint's tensors by original name (a TF1 checkpoint's
      reader, a HuggingFaceFolder: model_directory.ModelDirectory.reader).
    where: the checkpoint, for messages (its prefix or folder).
    new_head: whether head variables (the model's checkpoint_head_names)
      whose shapes differ from the checkpoint's keep their initialisation,
      logged, instead of being refused: a head of other num_labels.
    named_labels: the labels the checkpoint names for its head's rows
      (ModelDirectory.named_labels), or None (rows as stored).

  Returns:
    A LoadReport.

  Raises:
    CorruptCheckpointError: its files are truncated or damaged.
    ValueError: the checkpoint's encoder is not the model's (other layers,
      a variable missing: see names.check_encoder_fits), a
      variable's shape differs between model and checkpoint, or a weight
      is not floating point.
  """
  prefix = where
  variables = checkpoint_variables(model)
  reader = rows_by_label(reader, variables, getattr(model, "labels", None),
                         named_labels)
  if new_head:
    reader = without_other_heads(reader, variables, model, prefix)
  stored_shapes = reader.get_variable_to_shape_map()
  check_encoder_fits(getattr(model, "encoder", model).config, stored_shapes,
                     prefix, "the model's config")

  present = [name for name in variables if name in stored_shapes]
  for name in present:
    stored, expected = stored_shapes[name], list(variables[name].shape)
    if list(stored) != expected:
      raise ValueError(
          f"{prefix}: variable {name} has shape {list(stored)} in the "
          f"checkpoint but {expected} in the model; does the bert_config.json "
          f"match this checkpoint?")
  check_floats(reader, prefix, present)
  values = read_tensors(reader, prefix, present)
  for name in present:
    variable = variables[name]
    variable.assign(values[name].astype(variable.dtype))
  if adapted_layers(model):
    # A checkpoint's kernels hold any adapters merged in.
    restart_adapters(model)
    logger.info("LoRA adapters start again on %s's kernels", prefix)

  leftover = sorted(set(stored_shapes) - set(present))
  report = LoadReport(
      checkpoint=prefix,
      loaded=present,
      not_in_checkpoint=[name for name in variables if name not in present],
      unused=[name for name in leftover
              if not _is_ignored(name, variables)],
      ignored=[name for name in leftover if _is_ignored(name, variables)])
  logger.info("Loaded %d variables from %s", len(report.loaded), prefix)
  # enable_lora leaves these trainable (models/lora.py).
  model.new_weights = [variables[name].path
                       for name in report.not_in_checkpoint]
  # A frozen variable the checkpoint lacks is one the model does not use
  # (an embedder's pooler): training would not change it either.
  new = [name for name in report.not_in_checkpoint
         if variables[name].trainable]
  if new:
    # As transformers' "Some weights ... are newly initialized": shown by
    # default, once, with why the checkpoint's own were left out.
    reason = getattr(reader, "reason", None)
    logger.warning("%s: %s start at random, not loaded from %s%s; train the "
                   "model on a task before using its predictions",
                   type(model).__name__, ", ".join(new), prefix,
                   f": {reason}" if reason else "")
  if report.unused:
    logger.info("Not used from checkpoint: %s", report.unused)
  return report


def trained_variables(variables):
  """The trainable ones of {name: variable}: those with optimizer slots (a
  frozen encoder has none, as the original writes none for variables it
  does not train)."""
  return {name: variable for name, variable in variables.items()
          if variable.trainable}
