"""The original checkpoint names of a BertEncoder's variables, and their
shapes.

A table from each original name ("bert/encoder/layer_0/attention/self/query/
kernel") to the attribute path of its Keras variable, since Keras 3 forbids
"/" in layer names. Every weight keeps the original shape, which a config
gives (expected_shape), so a checkpoint is checked against a config before
any model is built (check_encoder_fits). Also a head's labels as a
bert_config.json keeps them (labels_fields).
"""

import re

# The original format's config, beside its checkpoint.
ORIGINAL_CONFIG_FILE = "bert_config.json"
# The training step an original checkpoint stores beside the weights.
GLOBAL_STEP = "global_step"


def dense_module_name(index, variable):
  """The name a sentence embedder's Dense layer `index` has in a checkpoint
  ("embedding/dense_0/kernel" [in, out], ".../bias"): sentence-transformers'
  Dense modules are read under it, and a bert_tf embedder saves its own."""
  return f"embedding/dense_{index}/{variable}"


# The pooling modes of sentence-transformers' Pooling module that bert_tf
# computes (layers.pooling.SentencePooling).
POOLING_MODES = ("cls", "max", "mean", "mean_sqrt_len_tokens",
                 "weightedmean")
# Its mode that pools a decoder's last real token: a BERT reads both ways.
_DECODER_POOLING = "lasttoken"


def check_pooling(modes, where):
  """The pooling modes (one, or a list of them) as a tuple; raises
  ValueError, naming `where`, for none or one not in POOLING_MODES."""
  modes = [modes] if isinstance(modes, str) else modes
  if not isinstance(modes, (list, tuple)) or not modes:
    raise ValueError(f"{where}: pooling is {modes!r}; expected a mode or a "
                     f"list of them ({', '.join(POOLING_MODES)})")
  for mode in modes:
    if mode == _DECODER_POOLING:
      raise ValueError(f"{where}: pooling mode {mode!r} pools a decoder's "
                       f"last token, which holds the whole text only in a "
                       f"left-to-right model; a BERT's embedder pools with "
                       f"one of {', '.join(POOLING_MODES)}")
    if mode not in POOLING_MODES:
      raise ValueError(f"{where}: pooling mode {mode!r} is not one bert_tf "
                       f"reproduces ({', '.join(POOLING_MODES)})")
  return tuple(modes)


# transformers' problem_type values: what a classifier's logits are for.
PROBLEM_TYPES = ("regression", "single_label_classification",
                 "multi_label_classification")


def labels_fields(labels, problem_type=None):
  """{field: value} naming a head's labels (in row order) and problem_type
  as Hugging Face's config.json does: extra fields for a bert_config.json
  (BertConfig.extra_fields), which the original's BertConfig keeps as
  attributes, so that a converted directory names its labels. Each label
  is written as a string (labels_of_fields reads no other)."""
  labels = [str(label) for label in labels]
  fields = {"id2label": {str(index): label
                         for index, label in enumerate(labels)},
            "label2id": {label: index for index, label in enumerate(labels)}}
  if problem_type is not None:
    fields["problem_type"] = problem_type
  return fields


def labels_of_fields(values, where):
  """(labels in row order, or None; problem_type, or None) from a config's
  fields (labels_fields' or a config.json's); bad ones name `where`."""
  problem_type = values.get("problem_type")
  if problem_type is not None and problem_type not in PROBLEM_TYPES:
    raise ValueError(f"{where}: \"problem_type\" is {problem_type!r}; "
                     f"expected one of {', '.join(PROBLEM_TYPES)}")
  id2label = values.get("id2label")
  if not id2label:
    return None, problem_type
  if not isinstance(id2label, dict):
    raise ValueError(f"{where}: \"id2label\" is {id2label!r}; "
                     f"expected an object {{\"0\": label, ...}}")
  labels = {}
  for key, label in id2label.items():
    if not key.isdigit() or not isinstance(label, str):
      raise ValueError(
          f"{where}: \"id2label\" entry {key!r}: {label!r} is not a "
          f"label id (0, 1, ...) with its label's name (a string)")
    labels[int(key)] = label
  if sorted(labels) != list(range(len(id2label))):
    raise ValueError(f"{where}: \"id2label\" has ids "
                     f"{sorted(map(int, id2label))}; expected 0 to "
                     f"{len(id2label) - 1}, one label each")
  labels = [labels[index] for index in range(len(labels))]
  repeated = first_repeated(labels)
  if repeated is not None:
    raise ValueError(f"{where}: \"id2label\" names {repeated!r} twice; "
                     f"each of the head's rows has a label of its own")
  check_regression(labels, problem_type, where)
  return labels, problem_type


def first_repeated(labels):
  """The first label named twice, as labels_fields writes it (a string),
  or None."""
  seen = set()
  for label in map(str, labels):
    if label in seen:
      return label
    seen.add(label)
  return None


def check_regression(labels, problem_type, where):
  """Raises ValueError, naming `where`, for a regression of more than one
  label: bert_tf's regression head predicts one value."""
  if problem_type == "regression" and len(labels) != 1:
    raise ValueError(f"{where}: \"problem_type\" is 'regression' with "
                     f"{len(labels)} labels; a regression predicts one "
                     f"value (one label)")


# Original name -> attribute path from a BertEncoder.
_EMBEDDING_NAMES = {
    "bert/embeddings/word_embeddings": "embeddings.word_embeddings",
    "bert/embeddings/token_type_embeddings": "embeddings.token_type_embeddings",
    "bert/embeddings/position_embeddings": "embeddings.position_embeddings",
    "bert/embeddings/LayerNorm/gamma": "embeddings.layer_norm.gamma",
    "bert/embeddings/LayerNorm/beta": "embeddings.layer_norm.beta",
}

# Names inside "bert/encoder/layer_{i}/" -> path inside transformer_layers[i].
_BLOCK_NAMES = {
    "attention/self/query/kernel": "attention.query.kernel",
    "attention/self/query/bias": "attention.query.bias",
    "attention/self/key/kernel": "attention.key.kernel",
    "attention/self/key/bias": "attention.key.bias",
    "attention/self/value/kernel": "attention.value.kernel",
    "attention/self/value/bias": "attention.value.bias",
    "attention/output/dense/kernel": "attention_output_dense.kernel",
    "attention/output/dense/bias": "attention_output_dense.bias",
    "attention/output/LayerNorm/gamma": "attention_layer_norm.gamma",
    "attention/output/LayerNorm/beta": "attention_layer_norm.beta",
    "intermediate/dense/kernel": "intermediate_dense.kernel",
    "intermediate/dense/bias": "intermediate_dense.bias",
    "output/dense/kernel": "output_dense.kernel",
    "output/dense/bias": "output_dense.bias",
    "output/LayerNorm/gamma": "output_layer_norm.gamma",
    "output/LayerNorm/beta": "output_layer_norm.beta",
}

_POOLER_NAMES = {
    "bert/pooler/dense/kernel": "pooler.kernel",
    "bert/pooler/dense/bias": "pooler.bias",
}


def encoder_names(config):
  """{original name: attribute path from a BertEncoder} for `config`."""
  names = dict(_EMBEDDING_NAMES)
  for index in range(config.num_hidden_layers):
    for original, path in _BLOCK_NAMES.items():
      names[f"bert/encoder/layer_{index}/{original}"] = (
          f"transformer_layers.{index}.{path}")
  names.update(_POOLER_NAMES)
  return names


def expected_shape(config, original, num_labels=None):
  """The shape of an original-format variable of `config`'s model
  (num_labels: the rows of a classifier's output_weights)."""
  hidden, intermediate = config.hidden_size, config.intermediate_size
  rows = {"word_embeddings": config.vocab_size,
          "token_type_embeddings": config.type_vocab_size,
          "position_embeddings": config.max_position_embeddings,
          "cls/seq_relationship/output_weights": 2,
          "cls/squad/output_weights": 2}
  for ending, count in rows.items():
    if original.endswith(ending):
      return [count, hidden]
  if original.endswith("output_weights"):
    return [num_labels, hidden]
  if original.endswith("output_bias"):
    if original == "cls/predictions/output_bias":
      return [config.vocab_size]
    return [2] if original.startswith(("cls/seq", "cls/squad")) else \
        [num_labels]
  width_in, width_out = hidden, hidden
  if "/intermediate/" in original:
    width_out = intermediate
  elif re.search(r"layer_\d+/output/dense", original):
    width_in = intermediate
  return [width_in, width_out] if original.endswith("kernel") else \
      [width_out]


# An original name of an encoder layer's variable, by layer number.
_LAYER = re.compile(r"bert/encoder/layer_(\d+)/")


def check_layer_count(layers, config, where, config_file):
  """Raises ValueError unless `layers`, the sorted numbers of the encoder
  layers a checkpoint holds, are 0 to config.num_hidden_layers - 1.

  Checked before a model is built: a config of 100,000 layers over a
  checkpoint of 2 is refused at once instead of built.
  """
  if layers == list(range(config.num_hidden_layers)):
    return
  if layers == list(range(len(layers))):
    held = f"{len(layers)} encoder layers"
  else:
    held = (f"encoder layers {', '.join(map(str, layers[:8]))}"
            f"{' ...' if len(layers) > 8 else ''}")
  raise ValueError(f"{where}: holds {held}, but {config_file} says "
                   f"num_hidden_layers {config.num_hidden_layers}; the "
                   f"config and the checkpoint must be one model's")


def check_encoder_fits(config, shapes, where, config_file):
  """Raises ValueError unless a checkpoint's encoder is `config`'s: as many
  layers, and every variable of the encoder there (the pooler may be
  missing) in config's shape.

  Args:
    shapes: the checkpoint's {original name: shape}.
    where, config_file: the checkpoint and the config, for the message.

  Checked before a model is built, so a config larger than its checkpoint
  (a vocab_size of 10^9) is refused instead of allocated.
  """
  check_layer_count(sorted({int(match.group(1)) for match in map(
      _LAYER.match, shapes) if match}), config, where, config_file)
  for name in encoder_names(config):
    if name not in shapes:
      if name in _POOLER_NAMES:
        continue
      raise ValueError(f"{where}: no variable {name}, which the encoder of "
                       f"{config_file} has")
    expected = expected_shape(config, name)
    if list(shapes[name]) != expected:
      raise ValueError(f"{where}: variable {name} is shaped "
                       f"{list(shapes[name])}, but {config_file} makes it "
                       f"{expected}")
