"""BertConfig: the fields of the original bert_config.json, validated.

The original release stored a model's shape in bert_config.json; every released
checkpoint ships one. This class reads and writes exactly that file, with the
original defaults, and fails early (naming the field) when a value is missing,
of the wrong type, or inconsistent, instead of failing later inside a layer.

Released files carry more than the model reads (the multilingual and Chinese
ones have directionality and pooler_*, which the original code stores and never
uses): such fields are kept and written back, and a file read and written
unchanged keeps its bytes. A Hugging Face config.json (it names a model_type)
is checkpoints.huggingface.config's to read.
"""

import copy
import dataclasses
import json
import logging
import math
import numbers

from bert_tf.files import atomic_outputs, input_checks, json_files

logger = logging.getLogger(__name__)

# tf.contrib.layers.layer_norm's variance epsilon, which BERT never changed.
LAYER_NORM_EPSILON = 1e-12

# Fields of Google's released files that the original model never reads,
# a classifier's labels as bert_tf writes them
# (checkpoints.names.labels_fields) and a cross-encoder's activation
# (checkpoints.sentence_transformers.activations.activation_fields).
INERT_FIELDS = ("directionality", "pooler_fc_size",
                "pooler_num_attention_heads", "pooler_num_fc_layers",
                "pooler_size_per_head", "pooler_type", "id2label",
                "label2id", "problem_type", "sentence_transformers")

# Fields other BERT-like configs use that would change the model: the one
# value bert_tf builds for each (anything else is refused, named).
_FIXED_FIELDS = {
    "position_embedding_type": "absolute",  # Hugging Face: relative_key...
    "use_relative_position": False,         # NEZHA
    "is_decoder": False,
    "add_cross_attention": False,
    "num_hidden_groups": 1,                 # ALBERT's shared layers
    "inner_group_num": 1,
}

# The activations hidden_act may name (layers.activations computes each).
HIDDEN_ACTS = ("gelu", "gelu_exact", "relu", "tanh", "linear")
# The extra field that keeps a config.json's hidden_act where it named
# another of the names of the same activation (gelu_pytorch_tanh: "gelu" in
# bert_config.json), so that the config.json written back names it again.
HUGGINGFACE_HIDDEN_ACT = "huggingface_hidden_act"


@dataclasses.dataclass
class BertConfig:
  """Configuration of a BERT model, as in the original `bert_config.json`.

  Args:
    vocab_size: size of the WordPiece vocabulary (rows of word_embeddings).
    hidden_size: width of the embeddings, encoder layers and pooler.
    num_hidden_layers: number of transformer blocks.
    num_attention_heads: attention heads per block; must divide hidden_size.
    intermediate_size: width of the feed-forward ("intermediate") layer.
    hidden_act: activation of the feed-forward layer and the masked-LM
      transform: "gelu" (the tanh approximation the original uses),
      "gelu_exact", "relu", "tanh" or "linear".
    hidden_dropout_prob: dropout after embeddings and every dense output.
    attention_probs_dropout_prob: dropout on the attention probabilities.
    max_position_embeddings: rows of the position table; the longest
      sequence the model accepts.
    type_vocab_size: number of segment ids (rows of token_type_embeddings).
    initializer_range: stddev of the truncated-normal weight initialiser.
    layer_norm_eps: every LayerNorm's epsilon; bert_config.json names it only
      where it is not the original's 1e-12.
    extra_fields: the file's other fields ({name: value}), kept and written
      back (see INERT_FIELDS); not part of equality.

  Example:
    >>> config = BertConfig(vocab_size=99, hidden_size=32, num_hidden_layers=2,
    ...                     num_attention_heads=4, intermediate_size=37)
    >>> BertConfig.from_dict(config.to_dict()) == config
    True
  """

  vocab_size: int
  hidden_size: int = 768
  num_hidden_layers: int = 12
  num_attention_heads: int = 12
  intermediate_size: int = 3072
  hidden_act: str = "gelu"
  hidden_dropout_prob: float = 0.1
  attention_probs_dropout_prob: float = 0.1
  max_position_embeddings: int = 512
  type_vocab_size: int = 16
  initializer_range: float = 0.02
  layer_norm_eps: float = LAYER_NORM_EPSILON
  extra_fields: dict = dataclasses.field(default_factory=dict, compare=False,
                                         repr=False)

  def __post_init__(self):
    self._validate(source="BertConfig")

  @classmethod
  def from_dict(cls, values, source="config"):
    """Builds a config from a dict such as a parsed bert_config.json.

    `source` names where the dict came from, for error messages.
    """
    if not isinstance(values, dict):
      raise ValueError(f"{source}: expected a JSON object, got "
                       f"{type(values).__name__}")
    if "vocab_size" not in values:
      raise ValueError(f"{source}: missing required field 'vocab_size'")
    fields = model_fields()
    extra = {name: value for name, value in values.items()
             if name not in fields}
    check_fixed_fields(source, extra)
    unknown = sorted(set(extra) - set(INERT_FIELDS) - set(_FIXED_FIELDS)
                     - {HUGGINGFACE_HIDDEN_ACT})
    if unknown:
      logger.warning("%s: field(s) %s are not BERT's; kept as they are, "
                     "unused", source, unknown)
    config = cls.__new__(cls)
    for field in fields.values():
      setattr(config, field.name, values.get(field.name, field.default))
    config.extra_fields = extra
    config._validate(source)
    return config

  @classmethod
  def from_json_file(cls, json_file):
    """Reads a bert_config.json (local path or any tf.io.gfile URL)."""
    text = input_checks.utf8_text(json_file)
    values = json_files.parse_json_object(text, json_file)
    if "model_type" in values:
      raise ValueError(
          f"{json_file}: a Hugging Face config.json (it names a model_type); "
          f"read it with bert_tf.checkpoints.huggingface.config.read_config")
    config = cls.from_dict(values, source=str(json_file))
    config._json_file_text = (text, values)
    return config

  def to_dict(self):
    """The bert_config.json fields: the model's (layer_norm_eps only where
    it is not the original's), then the extra fields."""
    values = {name: getattr(self, name) for name in model_fields()}
    if values["layer_norm_eps"] == LAYER_NORM_EPSILON:
      del values["layer_norm_eps"]
    values.update(self.extra_fields)
    return values

  def to_json_string(self):
    """The file this config was read from, where it still says the same;
    else the original's layout: sorted keys, two-space indent, newline."""
    text, values = getattr(self, "_json_file_text", (None, None))
    if text is not None and values == self.to_dict():
      return text
    return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

  def with_extra_fields(self, fields):
    """A copy with `fields` (e.g. a head's labels) among its extra fields;
    it still writes the file it was read from where that says the same
    (to_json_string)."""
    config = copy.copy(self)
    config.extra_fields = {**self.extra_fields, **fields}
    return config

  def to_json_file(self, json_file):
    """Writes the config atomically (temporary name, then rename)."""
    with atomic_outputs.atomic_write(json_file) as writer:
      writer.write(self.to_json_string())

  def _validate(self, source):
    for field in model_fields().values():
      value = getattr(self, field.name)
      _check_type(source, field.name, value, field.type)
      if field.type is float and not math.isfinite(value):
        raise ValueError(f"{source}: field '{field.name}' must be a finite "
                         f"number, got {value}")
      if field.type in (int, float) and value < 0:
        raise ValueError(f"{source}: field '{field.name}' must not be "
                         f"negative, got {value}")
    for name in ("vocab_size", "hidden_size", "num_hidden_layers",
                 "num_attention_heads", "intermediate_size",
                 "max_position_embeddings", "type_vocab_size"):
      if getattr(self, name) < 1:
        raise ValueError(f"{source}: field '{name}' must be at least 1, "
                         f"got {getattr(self, name)}")
    for name in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
      if not 0.0 <= getattr(self, name) < 1.0:
        raise ValueError(f"{source}: field '{name}' must be in [0, 1), "
                         f"got {getattr(self, name)}")
    if self.hidden_size % self.num_attention_heads:
      raise ValueError(
          f"{source}: hidden_size ({self.hidden_size}) is not a multiple of "
          f"num_attention_heads ({self.num_attention_heads})")
    if not 0 < self.layer_norm_eps < 1:
      raise ValueError(f"{source}: field 'layer_norm_eps' must be in (0, 1), "
                       f"got {self.layer_norm_eps}")
    if self.hidden_act not in HIDDEN_ACTS:
      raise ValueError(f"{source}: unknown hidden_act {self.hidden_act!r}; "
                       f"expected one of {sorted(HIDDEN_ACTS)}")


def model_fields():
  """{name: field} of the fields that shape the model (not extra_fields)."""
  return {field.name: field for field in dataclasses.fields(BertConfig)
          if field.name != "extra_fields"}


def check_fixed_fields(source, values):
  for name, built in _FIXED_FIELDS.items():
    if name in values and values[name] != built:
      raise ValueError(
          f"{source}: field {name!r} is {values[name]!r}; bert_tf builds "
          f"BERT as the original, with {name} {built!r} only")


def _check_type(source, name, value, expected):
  """int fields take integers only; float fields take any real number."""
  if expected is int:
    ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
  elif expected is float:
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
  else:
    ok = isinstance(value, expected)
  if not ok:
    raise ValueError(f"{source}: field '{name}' must be {expected.__name__}, "
                     f"got {value!r} ({type(value).__name__})")
