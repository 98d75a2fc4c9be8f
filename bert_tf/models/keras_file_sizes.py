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
it there and reads model.weights.h5's shapes (its HDF5 metadata, never the
tensors) before anything is built. A Keras release that renamed its loader
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
import io
import math
import numbers
import os
import re
import struct
import sys
import zipfile
from typing import NamedTuple

import h5py
import keras

from bert_tf.config import BertConfig

# Without weights to check a config against: over ten times BERT-large's
# 340M weights (16 GiB of float32), and over twice the layers of the
# largest BERT-like models (48).
MAX_VALUES = 2**32
MAX_LAYERS = 128

# A weights file holds a value in 4 bytes (float32), 2 (bfloat16), or half
# a byte (an int4 kernel): a config of more values than twice its bytes
# asks for weights that are not there.
VALUES_PER_BYTE = 2

WEIGHTS_FILE = "model.weights.h5"
_WEIGHTS_FILES = (WEIGHTS_FILE, "model.weights.npz")

# Keras' modules that load a model's file, and the functions among them
# that hold it open (the zip, the folder, the legacy .h5 file).
_KERAS_LOADERS = ("keras.src.saving.saving_lib",
                  "keras.src.legacy.saving.legacy_h5_format")

# The most a compressed weights file may expand (as Keras' own guard): no
# more weights are read into memory than 100 times the bytes stored.
_MAX_EXPANSION = 100

# A ZIP local file header: its size, and where the lengths of the name and
# of the extra field that come before the member's data are.
_ZIP_HEADER = struct.Struct("<4s22xHH")
_ZIP_HEADER_SIGNATURE = b"PK\x03\x04"

# The groups Keras names a model's transformer blocks by in model.weights.h5
# (its list of layers, one group per class name: transformer_block,
# transformer_block_1, ...).
_BLOCK_NAME = re.compile(r"transformer_block(_[1-9][0-9]*)?")

# enable_lora's targets: the Dense layer in a block's group, and which of
# its widths (the config's fields) are its inputs and its units.
_LORA_TARGETS = {
    "query": ("attention/query", "hidden_size", "hidden_size"),
    "key": ("attention/key", "hidden_size", "hidden_size"),
    "value": ("attention/value", "hidden_size", "hidden_size"),
    "attention_output": ("attention_output_dense", "hidden_size",
                         "hidden_size"),
    "intermediate": ("intermediate_dense", "hidden_size",
                     "intermediate_size"),
    "output": ("output_dense", "intermediate_size", "hidden_size"),
}


class Weight(NamedTuple):
  """A weight the config sizes, and where a .keras file's weights hold it.

  path: the dataset in model.weights.h5, from the model's group (the first
    block's where there is one in each).
  dims: ((the config's name for the axis, its value), ...), one per axis.
  pinned: whether the file holds it in this shape in every mode (a Dense
    kernel is quantized to others: only its values count).
  copies: how many weights of this shape the model has (one in each
    transformer block, a LayerNorm's gamma and beta).
  """
  path: str
  dims: tuple
  pinned: bool = True
  copies: int = 1

  @property
  def shape(self):
    return tuple(value for _, value in self.dims)


def check(model_class, config):
  """The BertConfig of `config` (get_config's dict of a `model_class`),
  whose sizes, and those of the rest of `config`, fit the .keras file Keras
  is loading, or, with none to read, the bounds above; else ValueError, in
  one line naming the field, its value and the weight it does not fit.
  Runs before anything is built. None for a class whose weights bert_tf
  does not know."""
  name = f"{model_class.__name__} config"
  encoder = _encoder_path(model_class)
  if encoder is None:
    return None
  bert_config = config.get("config")
  if not isinstance(bert_config, BertConfig):
    bert_config = BertConfig.from_dict(bert_config, source=name)
  weights = list(model_weights(model_class, bert_config, config, name))
  layers = bert_config.num_hidden_layers
  values = sum(math.prod(weight.shape) * weight.copies for weight in weights)
  load = _keras_load()
  where = name if load is None else f"{load.where}: {name}"
  if load is not None and load.weights_bytes is None:
    raise ValueError(f"{where}: the file holds no "
                     f"{' or '.join(_WEIGHTS_FILES)} for the model's weights")
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


def model_weights(model_class, config, arguments, name):
  """[Weight] of a model_class built from `config` (a BertConfig) and the
  rest of get_config's `arguments`: its encoder's (with any LoRA adapters)
  and its head's, as the model builds them. Raises ValueError, naming the
  field (`name`: the config's, for messages), for a size that is not a
  positive integer."""
  encoder = _encoder_path(model_class)
  yield from _encoder_weights(config, encoder)
  yield from _lora_weights(config, encoder, arguments.get("lora"), name)
  head = _class_entry(_HEADS, model_class)
  if head is not None:
    yield from head(config, arguments, name)


def _count(value, field, name):
  """(field, value) for a Weight's dims; raises ValueError, naming the
  field, unless value is an integer >= 1."""
  if (isinstance(value, bool) or not isinstance(value, numbers.Integral)
      or value < 1):
    raise ValueError(f"{name}: {field}={value!r} must be an integer >= 1")
  return field, int(value)


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
  targets = _lora_targets(lora)
  held = [target for target, (path, _, _) in _LORA_TARGETS.items()
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


def _encoder_path(model_class):
  """The encoder's group in model.weights.h5: the model's own, or its
  `encoder` attribute's."""
  return _class_entry(_ENCODER_PATHS, model_class)


def _class_entry(table, model_class):
  """table's entry for the nearest class in model_class's MRO it names."""
  for base in model_class.__mro__:
    if base.__name__ in table:
      return table[base.__name__]
  return None


def _dense(path, inputs, units, copies=1, use_bias=True):
  """A Dense layer's kernel [inputs, units] and bias [units] (a quantized
  kernel is stored in another shape, or packed)."""
  yield Weight(f"{path}/vars/0", (inputs, units), pinned=False, copies=copies)
  if use_bias:
    yield Weight(f"{path}/vars/1", (units,), copies=copies)


def _layer_norm(path, width, copies=1):
  """A LayerNormalization's gamma and beta [width]."""
  yield Weight(f"{path}/vars/0", (width,), copies=2 * copies)  # gamma, beta


def _encoder_weights(config, encoder):
  """The embeddings, each transformer block's and the pooler's."""
  hidden = ("hidden_size", config.hidden_size)
  inner = ("intermediate_size", config.intermediate_size)
  layers = config.num_hidden_layers
  yield Weight(f"{encoder}embeddings/vars/0",
               (("vocab_size", config.vocab_size), hidden))
  yield Weight(f"{encoder}embeddings/vars/1",
               (("type_vocab_size", config.type_vocab_size), hidden))
  yield Weight(f"{encoder}embeddings/vars/2",
               (("max_position_embeddings", config.max_position_embeddings),
                hidden))
  yield from _layer_norm(f"{encoder}embeddings/layer_norm", hidden)
  block = f"{encoder}layers/transformer_block/"
  for dense in ("attention/query", "attention/key", "attention/value",
                "attention_output_dense"):
    yield from _dense(block + dense, hidden, hidden, layers)
  yield from _layer_norm(block + "attention_layer_norm", hidden, layers)
  yield from _dense(block + "intermediate_dense", hidden, inner, layers)
  yield from _dense(block + "output_dense", inner, hidden, layers)
  yield from _layer_norm(block + "output_layer_norm", hidden, layers)
  yield from _dense(f"{encoder}layers/dense", hidden, hidden)  # the pooler


def _lora_weights(config, encoder, lora, name):
  """Each adapted Dense layer's A [inputs, rank] and B [rank, units], in
  every block; targets enable_lora would refuse are left to it."""
  if not isinstance(lora, dict):
    return  # the model refuses it
  rank = _count(lora.get("rank"), "lora rank", name)
  for target in _lora_targets(lora):
    path, inputs, units = _LORA_TARGETS[target]
    inputs = (inputs, getattr(config, inputs))
    units = (units, getattr(config, units))
    path = f"{encoder}layers/transformer_block/{path}/vars/lora_kernel_"
    yield Weight(path + "a", (inputs, rank), copies=config.num_hidden_layers)
    yield Weight(path + "b", (rank, units), copies=config.num_hidden_layers)


def _lora_targets(lora):
  """The targets of a config's lora (enable_lora's by default) that are
  Dense layers' names (enable_lora refuses others); none without lora."""
  if not isinstance(lora, dict):
    return []
  targets = _listed(lora.get("targets", ("query", "value")))
  return [target for target in dict.fromkeys(
      target for target in targets if isinstance(target, str))
          if target in _LORA_TARGETS]


def _hidden(config):
  """The hidden_size axis of a weight."""
  return ("hidden_size", config.hidden_size)


def _classification_head(path, rows, width):
  """A ClassificationHead: weights [rows, width], bias [rows]."""
  yield Weight(f"{path}/vars/0", (rows, width))
  yield Weight(f"{path}/vars/1", (rows,))


def _labels_head(config, arguments, name):
  """The head of num_labels rows over the hidden states."""
  yield from _classification_head(
      "layers/classification_head",
      _count(arguments.get("num_labels"), "num_labels", name),
      _hidden(config))


def _fixed_head(path, rows):
  """A head of a fixed number of rows over the hidden states."""
  def weights(config, arguments, name):
    del arguments, name  # no config field sizes it
    yield from _classification_head(path, ("rows", rows), _hidden(config))
  return weights


def _pretrainer_head(config, arguments, name):
  """The masked-LM transform and output bias, the next-sentence head."""
  head = "layers/masked_lm_head"
  yield from _dense(f"{head}/transform_dense", _hidden(config),
                    _hidden(config))
  yield from _layer_norm(f"{head}/transform_layer_norm", _hidden(config))
  yield Weight(f"{head}/vars/0", (("vocab_size", config.vocab_size),))
  yield from _fixed_head("layers/classification_head", 2)(config, arguments,
                                                           name)


def _listed(value):
  """value as the list a config's list argument holds (one string: a list
  of it); anything else as no list, which the model refuses itself."""
  if isinstance(value, str):
    return [value]
  return value if isinstance(value, (list, tuple)) else []


def _embedder_head(config, arguments, name):
  """Each Dense module's kernel and bias, after the pooling's
  hidden_size * len(pooling) values."""
  width = ("pooled width", config.hidden_size *
           max(1, len(_listed(arguments.get("pooling", "mean")))))
  dense = arguments.get("dense", ())
  if not isinstance(dense, (list, tuple)):
    raise ValueError(f"{name}: dense={dense!r}; expected a list of Dense "
                     "modules ({units, activation, use_bias})")
  for index, spec in enumerate(dense):
    if not isinstance(spec, dict):
      return  # the model refuses it
    units = _count(spec.get("units"), f"dense[{index}] units", name)
    suffix = f"_{index}" if index else ""
    yield from _dense(f"dense_layers/dense{suffix}", width, units,
                      use_bias=bool(spec.get("use_bias", True)))
    width = units


def _feature_tagger_head(config, arguments, name):
  """The layer combination's weights, two BiLSTM layers (each direction's
  recurrent kernel, kernel and bias of four gates), the tag head."""
  selected = arguments.get("selected_layers")
  if not isinstance(selected, (list, tuple)):
    raise ValueError(f"{name}: selected_layers={selected!r}; expected a "
                     "list of the encoder's layers (indices)")
  selected = len(selected)
  combination = arguments.get("combination")
  if combination == "weighted_sum" and selected:
    yield Weight("layer_combination/vars/0",
                 (("len(selected_layers)", selected),))
    yield Weight("layer_combination/vars/1", ())  # the scale
  width = ("combined width", config.hidden_size * (
      max(1, selected) if combination == "concat" else 1))
  units = _count(arguments.get("lstm_units", 768), "lstm_units", name)
  gates = ("4 * lstm_units", 4 * units[1])
  for index in range(2):
    suffix = f"_{index}" if index else ""
    for direction in ("forward_layer", "backward_layer"):
      cell = f"bilstms/bidirectional{suffix}/{direction}/cell/vars"
      yield Weight(f"{cell}/1", (units, gates))
      yield Weight(f"{cell}/0", (width, gates))
      yield Weight(f"{cell}/2", (gates,))
    width = ("2 * lstm_units", 2 * units[1])
  yield from _classification_head(
      "layers/classification_head",
      _count(arguments.get("num_labels"), "num_labels", name), width)


# Where each model class keeps its encoder's weights, and the weights its
# head adds (by class name: the nearest in a subclass's MRO applies).
_ENCODER_PATHS = {"BertEncoder": "", "EncoderModel": "encoder/"}
_HEADS = {
    "BertClassifier": _labels_head,
    "BertTagger": _labels_head,
    "BertSpanLabeler": _fixed_head("layers/classification_head", 2),
    "BertMultipleChoice": _fixed_head("choice_head", 1),
    "BertPretrainer": _pretrainer_head,
    "BertEmbedder": _embedder_head,
    "BertFeatureTagger": _feature_tagger_head,
}


class _Load(NamedTuple):
  """The keras.saving.load_model running on this thread.

  where: the file, for messages.
  weights_bytes: its weights file's size (None: it has none).
  root_config: the file's top-level config (None: unknown).
  h5_file: a callable giving model.weights.h5 as a file h5py reads (None:
    the file's weights are in another layout).
  """
  where: str
  weights_bytes: object
  root_config: object
  h5_file: object


def _keras_load():
  """The _Load of the keras.saving.load_model running on this thread, from
  its loader's frames; None outside one."""
  root_config = None
  frame = sys._getframe(1)  # pylint: disable=protected-access
  while frame is not None:
    if frame.f_globals.get("__name__") in _KERAS_LOADERS:
      local = frame.f_locals
      if root_config is None and isinstance(local.get("config_dict"), dict):
        root_config = local["config_dict"]
      loader = frame.f_code.co_name
      if loader == "_load_model_from_fileobj" and isinstance(
          local.get("zf"), zipfile.ZipFile):
        return _zip_load(local["zf"], root_config)
      if loader == "_load_model_from_dir" and "dirpath" in local:
        return _folder_load(str(local["dirpath"]), root_config)
      if loader == "load_model_from_hdf5" and isinstance(local.get("f"),
                                                         h5py.File):
        return _Load(local["f"].filename, local["f"].id.get_filesize(),
                     None, None)
    frame = frame.f_back
  return None


def _zip_load(archive, root_config):
  """The _Load of a .keras file open as `archive`."""
  where = archive.filename or "the .keras file"
  names = set(archive.namelist())
  member = next((name for name in _WEIGHTS_FILES if name in names), None)
  if member is None:
    return _Load(where, None, root_config, None)
  info = archive.getinfo(member)
  h5_file = None
  if member == WEIGHTS_FILE:
    h5_file = lambda: _member_file(archive, info)
  return _Load(where, info.file_size, root_config, h5_file)


def _folder_load(folder, root_config):
  """The _Load of an unzipped .keras folder."""
  for name in _WEIGHTS_FILES:
    path = os.path.join(folder, name)
    if os.path.isfile(path):
      h5_file = None
      if name == WEIGHTS_FILE:
        h5_file = lambda: path
      return _Load(folder, os.path.getsize(path), root_config, h5_file)
  return _Load(folder, None, root_config, None)


def _member_file(archive, info):
  """A zip member as a file h5py can read: where it is stored as it is (as
  Keras writes it), a view of the archive's bytes, so that reading its
  metadata reads nothing else; a compressed member read whole, as Keras
  reads it next."""
  if info.compress_type != zipfile.ZIP_STORED:
    if info.file_size > _MAX_EXPANSION * info.compress_size:
      raise ValueError(
          f"{archive.filename}: {info.filename} is {info.file_size:,} bytes "
          f"compressed into {info.compress_size:,}; bert_tf reads weights "
          f"compressed at most {_MAX_EXPANSION}-fold")
    return io.BytesIO(archive.read(info))
  archive.fp.seek(info.header_offset)
  header = archive.fp.read(_ZIP_HEADER.size)
  if len(header) != _ZIP_HEADER.size or not header.startswith(
      _ZIP_HEADER_SIGNATURE):
    raise ValueError(f"{archive.filename}: {info.filename} has no ZIP header")
  name_length, extra_length = _ZIP_HEADER.unpack(header)[1:]
  start = info.header_offset + _ZIP_HEADER.size + name_length + extra_length
  return _Slice(archive.fp, start, info.file_size)


class _Slice(io.RawIOBase):
  """Bytes [start, start + size) of a seekable binary file, read as a file
  of their own."""

  def __init__(self, file, start, size):
    super().__init__()
    self._file = file
    self._start = start
    self._size = size
    self._position = 0

  def readable(self):
    return True

  def seekable(self):
    return True

  def tell(self):
    return self._position

  def seek(self, offset, whence=io.SEEK_SET):
    base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position,
            io.SEEK_END: self._size}[whence]
    self._position = max(0, base + offset)
    return self._position

  def readinto(self, buffer):
    count = max(0, min(len(buffer), self._size - self._position))
    self._file.seek(self._start + self._position)
    data = self._file.read(count)
    buffer[:len(data)] = data
    self._position += len(data)
    return len(data)
