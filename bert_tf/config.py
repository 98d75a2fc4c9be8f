"""BertConfig: the fields of the original bert_config.json, validated.

The original release stored a model's shape in bert_config.json; every released
checkpoint ships one. This class reads and writes exactly that file, with the
original defaults, and fails early (naming the field) when a value is missing,
of the wrong type, or inconsistent, instead of failing later inside a layer.
"""

import dataclasses
import json
import numbers

from bert_tf import file_io
from bert_tf.layers.activations import ACTIVATIONS


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
    known = {field.name for field in dataclasses.fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
      raise ValueError(f"{source}: unknown field(s) {unknown}; a BERT config "
                       f"has {sorted(known)}")
    if "vocab_size" not in values:
      raise ValueError(f"{source}: missing required field 'vocab_size'")
    config = cls.__new__(cls)
    for field in dataclasses.fields(cls):
      default = field.default
      setattr(config, field.name, values.get(field.name, default))
    config._validate(source)
    return config

  @classmethod
  def from_json_file(cls, json_file):
    """Reads a bert_config.json (local path or any tf.io.gfile URL)."""
    with file_io.open_file(json_file, "r") as reader:
      text = reader.read()
    try:
      values = json.loads(text)
    except json.JSONDecodeError as error:
      raise ValueError(f"{json_file}: not valid JSON (line {error.lineno}, "
                       f"column {error.colno}): {error.msg}") from None
    return cls.from_dict(values, source=str(json_file))

  def to_dict(self):
    return dataclasses.asdict(self)

  def to_json_string(self):
    """The original's layout: sorted keys, two-space indent, newline."""
    return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

  def to_json_file(self, json_file):
    """Writes the config atomically (temporary name, then rename)."""
    with file_io.atomic_write(json_file) as writer:
      writer.write(self.to_json_string())

  @property
  def attention_head_size(self):
    return self.hidden_size // self.num_attention_heads

  def _validate(self, source):
    for field in dataclasses.fields(self):
      value = getattr(self, field.name)
      _check_type(source, field.name, value, field.type)
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
    if self.hidden_act not in ACTIVATIONS:
      raise ValueError(f"{source}: unknown hidden_act {self.hidden_act!r}; "
                       f"expected one of {sorted(ACTIVATIONS)}")


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
