"""A model's config checked against its .keras file's weights before the
model is built: each number that sizes a weight (vocab_size, num_labels, a
Dense module's units, a LoRA rank, ...) must be the shape of the weight the
file holds for it, and all the weights together no more values than the
file has bytes.

Keras builds a model from its config (from_config) before it opens the
weights, and tells from_config nothing of the file: a tampered config of a
10^9-row table would allocate it, and one of 100,000 layers build for
minutes, before Keras found that the weights do not fit. A number the model
saves beside its weights does not help (a tampered file changes both), nor
building lazily (Keras builds, compiles and measures the model before it
reads a weight). Keras' loader holds the file it is loading in its own
frames on this thread (keras.saving.load_model's saving_lib): check() finds
it there (keras_loading) and reads model.weights.h5's shapes (its HDF5
metadata, never the tensors; keras_weight_shapes says where each is)
before anything is built. A Keras release that renamed its loader
would leave the file unfound and the bounds below in force, and
tests/models/test_keras_files.py failing.

Where there is no such file to read (from_config called directly, a bert_tf
model inside another Keras model, a legacy .h5 file) a config is held to
sane bounds instead: MAX_VALUES weight values, MAX_LAYERS transformer
blocks, and, where a file is being loaded, no more values than it has
bytes.
"""

import contextlib
import functools
import math
import re

import h5py
import keras

from bert_tf.config import BertConfig
from bert_tf.models.keras_loading import (WEIGHTS_FILE, WEIGHTS_FILES,
                                          keras_load)
from bert_tf.models.keras_weight_shapes import (LORA_TARGETS, encoder_path,
                                                lora_targets, model_weights)

# Without weights to check a config against: over ten times BERT-large's
# 340M weights (16 GiB of float32), and over twice the layers of the
# largest BERT-like models (48).
MAX_VALUES = 2**32
MAX_LAYERS = 128

# A weights file holds a value in 4 bytes (float32), 2 (bfloat16), or half
# a byte (an int4 kernel): a config of more values than twice its bytes
# asks for weights that are not there.
VALUES_PER_BYTE = 2

# The groups Keras names a model's transformer blocks by in model.weights.h5
# (its list of layers, one group per class name: transformer_block,
# transformer_block_1, ...).
_BLOCK_NAME = re.compile(r"transformer_block(_[1-9][0-9]*)?")


def check(model_class, config):
  """The BertConfig of `config` (get_config's dict of a `model_class`),
  whose sizes, and those of the rest of `config`, fit the .keras file Keras
  is loading, or, with none to read, the bounds above; else ValueError, in
  one line naming the field, its value and the weight it does not fit.
  Runs before anything is built. None for a class whose weights bert_tf
  does not know."""
  name = f"{model_class.__name__} config"
  encoder = encoder_path(model_class)
  if encoder is None:
    return None
  bert_config = config.get("config")
  if not isinstance(bert_config, BertConfig):
    bert_config = BertConfig.from_dict(bert_config, source=name)
  weights = list(model_weights(model_class, bert_config, config, name))
  layers = bert_config.num_hidden_layers
  values = sum(math.prod(weight.shape) * weight.copies for weight in weights)
  load = keras_load()
  where = name if load is None else f"{load.where}: {name}"
  if load is not None and load.weights_bytes is None:
    raise ValueError(f"{where}: the file holds no "
                     f"{' or '.join(WEIGHTS_FILES)} for the model's weights")
  with _weights_file(load, config) as weights_file:
    if weights_file is None:
      _check_bounds(where, layers, values)
    else:
      _check_blocks(weights_file, encoder, layers, where)
      for weight in weights:
        if weight.pinned:
          _check_shape(weights_file, weight, where)
      _check_adapters(weights_file, encoder, config.get("lora"), where)
      _check_quantization(weights_file, encoder, config.get("quantized_to"),
                          where)
  if load is not None and values > VALUES_PER_BYTE * load.weights_bytes:
    raise ValueError(f"{where}: its sizes make {values:,} weight values, "
                     f"but {WEIGHTS_FILE} holds {load.weights_bytes:,} bytes")
  return bert_config


def _check_bounds(where, layers, values):
  """The bounds of a config with no weights file to check it against."""
  if layers > MAX_LAYERS:
    raise ValueError(f"{where}: num_hidden_layers={layers} is over "
                     f"{MAX_LAYERS}, the most bert_tf builds unchecked by a "
                     f".keras file's {WEIGHTS_FILE}")
  if values > MAX_VALUES:
    raise ValueError(f"{where}: its sizes make {values:,} weight values, "
                     f"over {MAX_VALUES:,}, the most bert_tf builds "
                     f"unchecked by a .keras file's {WEIGHTS_FILE}")


def _weights_file(load, config):
  """A context giving the model.weights.h5 of the .keras file being loaded
  as an h5py.File, where `config` is the file's top-level model's (whose
  weights are at the file's root); else None."""
  if (load is None or load.h5_file is None or load.root_config is None
      or load.root_config.get("config") is not config):
    return contextlib.nullcontext()
  try:
    return h5py.File(load.h5_file(), "r")
  except OSError as error:
    raise ValueError(f"{load.where}: {WEIGHTS_FILE} is not an HDF5 file "
                     f"({error})") from None


def _check_blocks(weights_file, encoder, layers, where):
  """Raises ValueError unless the file holds `layers` transformer blocks."""
  group = _hard_linked(weights_file, encoder + "layers")
  names = list(group) if isinstance(group, h5py.Group) else []
  blocks = sum(1 for name in names if _BLOCK_NAME.fullmatch(name))
  if blocks != layers:
    raise ValueError(f"{where}: num_hidden_layers={layers}, but "
                     f"{WEIGHTS_FILE} holds {blocks} transformer blocks "
                     f"({encoder}layers/transformer_block*)")


def _check_adapters(weights_file, encoder, lora, where):
  """Raises ValueError unless the file holds LoRA adapters on the Dense
  layers lora's targets name, and on no others (Keras would load none of
  an adapter the config does not build)."""
  targets = lora_targets(lora)
  held = [target for target, (path, _, _) in LORA_TARGETS.items()
          if _hard_linked(weights_file, f"{encoder}layers/transformer_block/"
                          f"{path}/vars/lora_kernel_a") is not None]
  if set(held) != set(targets):
    raise ValueError(f"{where}: lora targets {targets or 'none'}, but "
                     f"{WEIGHTS_FILE} holds adapters on {held or 'none'}")


def _check_quantization(weights_file, encoder, mode, where):
  """Raises ValueError unless the pooler's weights in the file are as many
  as those of a Dense layer quantized to `mode` (None: float): a config
  that quantizes otherwise than the file would build weights it has not.
  A mode Keras does not know is left to quantize() to refuse."""
  if mode is not None and not isinstance(mode, str):
    return
  expected = _dense_weight_count(mode)
  pooler = _hard_linked(weights_file, f"{encoder}layers/dense/vars")
  held = len(pooler) if isinstance(pooler, h5py.Group) else 0
  if expected is not None and held != expected:
    raise ValueError(
        f"{where}: quantized_to={mode!r}, but {WEIGHTS_FILE}'s "
        f"{encoder}layers/dense (the pooler) holds {held} weights, where a "
        f"Dense layer {'quantized to ' + mode if mode else 'of floats'} "
        f"has {expected}")


@functools.lru_cache(maxsize=None)
def _dense_weight_count(mode):
  """How many weights Keras saves of a Dense layer quantized to `mode`
  (None: float), seen on one of 2 units; None for a mode Keras refuses."""
  dense = keras.layers.Dense(2, name="weight_count")
  dense.build((None, 2))
  if mode is not None:
    try:
      dense.quantize(mode)
    except (ValueError, NotImplementedError, TypeError):
      return None
  saved = {}
  dense.save_own_variables(saved)
  return len(saved)


def _check_shape(weights_file, weight, where):
  """Raises ValueError unless the file holds `weight` in its shape, naming
  the first field whose axis differs."""
  dataset = _hard_linked(weights_file, weight.path)
  if not isinstance(dataset, h5py.Dataset):
    raise ValueError(f"{where}: {WEIGHTS_FILE} holds no {weight.path}, the "
                     f"weight of its {_fields(weight.dims)}")
  shape = tuple(dataset.shape)
  if shape == weight.shape:
    return
  differing = [dim for dim, size in zip(weight.dims, shape) if dim[1] != size]
  dims = differing[:1] if len(shape) == len(weight.dims) else weight.dims
  stated = ", ".join(f"{field}={value}" for field, value in dims)
  raise ValueError(f"{where}: {stated}, but {WEIGHTS_FILE}'s {weight.path} "
                   f"is {list(shape)}")


def _fields(dims):
  """The fields that size a weight's axes, each once."""
  return ", ".join(dict.fromkeys(field for field, _ in dims))


def _hard_linked(weights_file, path):
  """The object at `path`, reached by hard links only (Keras refuses a
  soft or external link, which could lead to another dataset or file);
  None where there is none."""
  node = weights_file
  for part in path.split("/"):
    if not isinstance(node, h5py.Group) or part not in node or not \
        isinstance(node.get(part, getlink=True), h5py.HardLink):
      return None
    node = node[part]
  return node
