"""A Hugging Face BERT config.json <-> BertConfig: hidden_act mapped by
name, transformers' own fields (architectures, id2label, pad_token_id, ...)
left to it."""

from bert_tf.config import (HUGGINGFACE_HIDDEN_ACT, BertConfig,
                            check_fixed_fields, model_fields)
from bert_tf.files import json_files

# Hugging Face's hidden_act names -> bert_tf's. Its "gelu" is the exact erf
# GELU; the original's "gelu" (tanh) is its gelu_new / gelu_pytorch_tanh /
# gelu_fast / gelu_accurate (the same formula).
HUGGINGFACE_ACTIVATIONS = {
    "gelu": "gelu_exact", "gelu_python": "gelu_exact",
    "gelu_new": "gelu", "gelu_pytorch_tanh": "gelu", "gelu_fast": "gelu",
    "gelu_accurate": "gelu", "relu": "relu", "tanh": "tanh",
    "linear": "linear",
}
# The activations bert_tf computes (config.HIDDEN_ACTS) -> the name Hugging
# Face configs write for each.
TO_HUGGINGFACE_ACTIVATIONS = {"gelu": "gelu_new", "gelu_exact": "gelu",
                              "relu": "relu", "tanh": "tanh",
                              "linear": "linear"}


def read_config(json_file):
  """The BertConfig of a bert_config.json or a Hugging Face config.json
  (one that names a model_type)."""
  values = json_files.read_json_object(json_file)
  if "model_type" in values:
    return from_huggingface_dict(values, source=str(json_file))
  return BertConfig.from_json_file(json_file)


def from_huggingface_dict(values, source="config.json"):
  """Builds a config from a Hugging Face BERT config.json's dict.

  Raises:
    ValueError: another model_type, or a value bert_tf cannot build,
      naming the field and the value.
  """
  if values.get("model_type") != "bert":
    raise ValueError(f"{source}: model_type {values.get('model_type')!r} "
                     f"is not a BERT; bert_tf reads model_type 'bert'")
  check_fixed_fields(source, values)
  activation = values.get("hidden_act", "gelu")
  if not isinstance(activation, str) or \
      activation not in HUGGINGFACE_ACTIVATIONS:
    raise ValueError(
        f"{source}: hidden_act {activation!r} has no bert_tf equivalent; "
        f"expected one of {sorted(HUGGINGFACE_ACTIVATIONS)}")
  fields = {name: values[name] for name in model_fields() if name in values}
  fields["hidden_act"] = HUGGINGFACE_ACTIVATIONS[activation]
  if activation != TO_HUGGINGFACE_ACTIVATIONS[fields["hidden_act"]]:
    fields[HUGGINGFACE_HIDDEN_ACT] = activation
  # Hugging Face's default, where an old config.json leaves it out.
  fields.setdefault("type_vocab_size", 2)
  return BertConfig.from_dict(fields, source)


def to_huggingface_dict(config):
  """The BERT fields of a Hugging Face config.json for `config`."""
  values = {name: value for name, value in config.to_dict().items()
            if name in model_fields()}
  values["hidden_act"] = _huggingface_hidden_act(config)
  values["layer_norm_eps"] = config.layer_norm_eps
  values["model_type"] = "bert"
  return values


def _huggingface_hidden_act(config):
  """The config.json name of hidden_act: the one it was read by
  (HUGGINGFACE_HIDDEN_ACT), where that still names it."""
  named = config.extra_fields.get(HUGGINGFACE_HIDDEN_ACT)
  if isinstance(named, str) and \
      HUGGINGFACE_ACTIVATIONS.get(named) == config.hidden_act:
    return named
  return TO_HUGGINGFACE_ACTIVATIONS[config.hidden_act]
