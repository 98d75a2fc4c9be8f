"""The weights each bert_tf model builds from its config (model_weights):
where a .keras file's model.weights.h5 holds each, and which config field
sizes each of its axes, as the model's layers build them."""

import numbers
from typing import NamedTuple

# enable_lora's targets: the Dense layer in a block's group, and which of
# its widths (the config's fields) are its inputs and its units.
LORA_TARGETS = {
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


def model_weights(model_class, config, arguments, name):
  """[Weight] of a model_class built from `config` (a BertConfig) and the
  rest of get_config's `arguments`: its encoder's (with any LoRA adapters)
  and its head's, as the model builds them. Raises ValueError, naming the
  field (`name`: the config's, for messages), for a size that is not a
  positive integer."""
  encoder = encoder_path(model_class)
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


def encoder_path(model_class):
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
  for target in lora_targets(lora):
    path, inputs, units = LORA_TARGETS[target]
    inputs = (inputs, getattr(config, inputs))
    units = (units, getattr(config, units))
    path = f"{encoder}layers/transformer_block/{path}/vars/lora_kernel_"
    yield Weight(path + "a", (inputs, rank), copies=config.num_hidden_layers)
    yield Weight(path + "b", (rank, units), copies=config.num_hidden_layers)


def lora_targets(lora):
  """The targets of a config's lora (enable_lora's by default) that are
  Dense layers' names (enable_lora refuses others); none without lora."""
  if not isinstance(lora, dict):
    return []
  targets = _listed(lora.get("targets", ("query", "value")))
  return [target for target in dict.fromkeys(
      target for target in targets if isinstance(target, str))
          if target in LORA_TARGETS]


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


def _masked_lm_head(config, arguments, name):
  """The masked-LM transform and output bias (a sparse encoder's head)."""
  del arguments, name  # the config sizes it
  head = "layers/masked_lm_head"
  yield from _dense(f"{head}/transform_dense", _hidden(config),
                    _hidden(config))
  yield from _layer_norm(f"{head}/transform_layer_norm", _hidden(config))
  yield Weight(f"{head}/vars/0", (("vocab_size", config.vocab_size),))


def _routed_sparse_encoder_head(config, arguments, name):
  """The masked-LM head, the query route's weight per vocabulary token."""
  yield from _masked_lm_head(config, arguments, name)
  yield Weight("layers/sparse_static_embedding/vars/0",
               (("vocab_size", config.vocab_size),))


def _pretrainer_head(config, arguments, name):
  """The masked-LM head, the next-sentence head."""
  yield from _masked_lm_head(config, arguments, name)
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
    "BertSparseEncoder": _masked_lm_head,
    "BertRoutedSparseEncoder": _routed_sparse_encoder_head,
}
