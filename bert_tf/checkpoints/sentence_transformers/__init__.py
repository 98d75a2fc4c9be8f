"""sentence-transformers folders: what makes a BERT an embedder or a
cross-encoder, read and written.

A SentenceTransformer folder is a Hugging Face BERT folder (the Transformer
module, usually at the root) plus modules.json, which lists the modules its
token embeddings go through: Pooling, then any Dense, then Normalize. Two
layouts are in use. The classic one most Hub models still have names the
modules sentence_transformers.models.<Class>, writes the pooling as
pooling_mode_*_tokens booleans and the max length in sentence_bert_config
.json. sentence-transformers 5 and 6 name them by their new modules
(sentence_transformers.base.modules.dense.Dense, ...), write
"pooling_mode" as a string and the max length in tokenizer_config.json.
config_sentence_transformers.json holds the prompts and, for a
CrossEncoder (a BertForSequenceClassification), model_type and the
activation its predict applies; the Hub's ms-marco cross-encoders record
the activation in config.json instead. A SparseEncoder (SPLADE) is a
BertForMaskedLM (an MLMTransformer, or a Transformer whose
sentence_bert_config.json says "transformer_task": "fill-mask"), then
SpladePooling, or a Router of inference-free SPLADE (sparse_modules reads
those modules); its config_sentence_transformers.json may set
max_active_dims.

Only what bert_tf reproduces exactly is read; anything else is refused in
one line naming the file and the module or field. No torch: Dense weights
are read from their safetensors (a pickle is refused, as for the encoder).
"""

import dataclasses
import os
from typing import Optional


from bert_tf.checkpoints.names import check_pooling
from bert_tf.checkpoints.safetensors_files import tensor_headers
from bert_tf.checkpoints.sentence_transformers.activations import (
    TORCH_ACTIVATIONS, activation_of)
from bert_tf.checkpoints.sentence_transformers.module_files import (
    DENSE_WEIGHTS_FILE, MODULE_CONFIG_FILE, json_object)
from bert_tf.checkpoints.sentence_transformers.sparse_modules import (
    DEFAULT_SPLADE, SpladeModule, StaticEmbeddingModule, check_fill_mask,
    read_router, read_splade)
from bert_tf.files.json_files import read_json
from bert_tf.files import storage
from bert_tf.files.model_files import model_file, model_folder
from bert_tf.wordpiece.tokenizer_json import MIN_MAX_LENGTH

MODULES_FILE = "modules.json"
MODEL_CONFIG_FILE = "config_sentence_transformers.json"
SENTENCE_BERT_CONFIG_FILE = "sentence_bert_config.json"
_PICKLE_WEIGHTS_FILE = "pytorch_model.bin"
# A Dense module's tensors (torch's Linear: weight [out, in]).
DENSE_WEIGHT, DENSE_BIAS = "linear.weight", "linear.bias"

EMBEDDER, CROSS_ENCODER = "SentenceTransformer", "CrossEncoder"
SPARSE_ENCODER = "SparseEncoder"
MODEL_TYPES = (EMBEDDER, CROSS_ENCODER, SPARSE_ENCODER)
# The classic Pooling config's keys, in the order sentence-transformers
# concatenates the modes they turn on.
_LEGACY_POOLING_KEYS = {
    "pooling_mode_cls_token": "cls",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens": "weightedmean",
    "pooling_mode_lasttoken": "lasttoken",
}
# The module kinds of modules.json, by their class name.
_MODULE_KINDS = ("Transformer", "Pooling", "Dense", "Normalize")
# A SparseEncoder's: an MLMTransformer is a fill-mask Transformer; a
# Router sends queries and documents through modules of their own.
_SPARSE_KINDS = ("MLMTransformer", "SpladePooling", "Router")
# The module types written, by kind: the classic names, which every
# version reads (5 and 6 map them to their own modules, whose paths differ
# between the two); SpladePooling's path is the same in both.
MODULE_TYPES = {kind: f"sentence_transformers.models.{kind}"
                for kind in _MODULE_KINDS}
MODULE_TYPES["SpladePooling"] = ("sentence_transformers.sparse_encoder."
                                 "modules.splade_pooling.SpladePooling")
# config_sentence_transformers.json's similarity_fn_name values that
# sentence-transformers 5 and 6 both take, and the one where it has none.
SIMILARITIES = ("cosine", "dot", "euclidean", "manhattan")
DEFAULT_SIMILARITY = "cosine"
# How many modules a message lists.
_LISTED = 8


@dataclasses.dataclass(frozen=True, kw_only=True)
class DenseModule:
  """A Dense module: in_features -> units (out_features); its weights
  [out, in] as stored."""
  in_features: int
  units: int
  activation: str
  use_bias: bool
  weights_file: str


@dataclasses.dataclass(kw_only=True)
class Pipeline:
  """A sentence-transformers folder's modules and settings.

  Attributes:
    model_type: EMBEDDER, CROSS_ENCODER or SPARSE_ENCODER.
    transformer_dir: the folder of its Transformer module (the BERT).
    pooling: the pooling modes, concatenated in this order (POOLING_MODES).
    dense: DenseModules, in order.
    normalize: whether a Normalize module ends it.
    max_seq_length: the longest input in tokens, as sentence-transformers
      chooses it (max_length_of), or None to take the tokenizer's.
    prompts: {name: prompt prefixed to the text}.
    default_prompt_name: the prompt encode applies unless told otherwise.
    similarity: config_sentence_transformers.json's similarity_fn_name.
    activation: a CrossEncoder's (activations
      .ACTIVATIONS' names), or None: its default (activation_or_default).
    lower_case_input: sentence_bert_config.json's do_lower_case.
    splade: a SparseEncoder's SpladeModule, else None.
    max_active_dims: a SparseEncoder's, or None: all its weights.
    static_query: a Router SparseEncoder's query route
      (StaticEmbeddingModule), else None; its document route is the rest.
    default_route: a Router's route for encode ("query" or "document"),
      or None: encode needs one named.
    query_max_length: the most tokens of a Router's query route (its
      tokenizer_config.json's model_max_length, which model_directory
      reads with its tokenizer), or None: all.
    truncate_dim: an embedder's, the first dimensions encode keeps; None:
      all.
    include_prompt: whether an embedder's Pooling pools the prompt's
      tokens.
  """
  model_type: str
  transformer_dir: str
  pooling: tuple = ("mean",)
  dense: list = dataclasses.field(default_factory=list)
  normalize: bool = False
  max_seq_length: Optional[int] = None
  prompts: dict = dataclasses.field(default_factory=dict)
  default_prompt_name: Optional[str] = None
  similarity: Optional[str] = None
  activation: Optional[str] = None
  lower_case_input: bool = False
  splade: Optional[SpladeModule] = None
  max_active_dims: Optional[int] = None
  static_query: Optional[StaticEmbeddingModule] = None
  default_route: Optional[str] = None
  query_max_length: Optional[int] = None
  truncate_dim: Optional[int] = None
  include_prompt: bool = True

  def truncated_dimension(self, hidden_size):
    """An embedder's truncate_dim, capped at its embeddings' length (its
    last Dense module's units, else hidden_size per pooling mode) as
    sentence-transformers caps it; None where unset."""
    if self.truncate_dim is None:
      return None
    width = self.dense[-1].units if self.dense else \
        hidden_size * len(self.pooling)
    return min(self.truncate_dim, width)


def is_folder(directory):
  """Whether `directory` is a sentence-transformers folder: it has
  modules.json, or config_sentence_transformers.json."""
  return storage.isdir(directory) and any(
      storage.exists(os.path.join(directory, name))
      for name in (MODULES_FILE, MODEL_CONFIG_FILE))


def read_pipeline(directory):
  """The Pipeline of a sentence-transformers folder.

  Raises:
    ValueError: one line naming the file and the module or field that
      bert_tf does not reproduce, or a malformed file.
  """
  model_config = json_object(directory, MODEL_CONFIG_FILE) or {}
  model_config_file = os.path.join(directory, MODEL_CONFIG_FILE)
  entries = _module_entries(directory)
  model_type = model_config.get("model_type", _implied_type(entries))
  if model_type not in MODEL_TYPES:
    raise ValueError(f"{model_config_file}: model_type {model_type!r} is "
                     f"not one bert_tf reproduces ({', '.join(MODEL_TYPES)})")
  modules = _modules(directory, entries, model_type)
  pipeline = Pipeline(model_type=model_type,
                      transformer_dir=modules[0][1] if modules else directory)
  transformer_kind = modules[0][0] if modules else None
  pipeline.prompts, pipeline.default_prompt_name = _prompts(
      model_config, model_config_file,
      ("query", "document") if model_type == SPARSE_ENCODER else ())
  pipeline.similarity = model_config.get("similarity_fn_name")
  if pipeline.similarity not in (None, *SIMILARITIES):
    raise ValueError(f"{model_config_file}: similarity_fn_name "
                     f"{pipeline.similarity!r}; expected one of "
                     f"{', '.join(SIMILARITIES)}")
  if model_type == CROSS_ENCODER:
    activation = model_config.get("activation_fn")
    pipeline.activation = activation_of(
        activation, model_config_file, "activation_fn") \
        if activation is not None else None
  elif model_type == SPARSE_ENCODER and modules and \
      modules[0][0] == "Router":
    router = read_router(modules[0][1])
    transformer_kind = router.transformer_kind
    pipeline.transformer_dir = router.transformer_dir
    pipeline.splade, pipeline.static_query = router.splade, router.static_query
    pipeline.default_route = router.default_route
    pipeline.max_active_dims = _optional_count(
        model_config, "max_active_dims", model_config_file)
  elif model_type == SPARSE_ENCODER:
    pipeline.splade = read_splade(modules[1][1]) if modules else \
        DEFAULT_SPLADE
    pipeline.max_active_dims = _optional_count(
        model_config, "max_active_dims", model_config_file)
  else:
    _read_modules(pipeline, modules)
    pipeline.truncate_dim = _optional_count(model_config, "truncate_dim",
                                            model_config_file)
  sentence_bert = json_object(pipeline.transformer_dir,
                               SENTENCE_BERT_CONFIG_FILE) or {}
  where = os.path.join(pipeline.transformer_dir, SENTENCE_BERT_CONFIG_FILE)
  if model_type == SPARSE_ENCODER and modules:
    check_fill_mask(sentence_bert, transformer_kind, where)
  length = sentence_bert.get("max_seq_length")
  if length is not None and not (_is_count(length) and
                                 length >= MIN_MAX_LENGTH):
    raise ValueError(f"{where}: max_seq_length is {length!r}; expected an "
                     f"integer of at least {MIN_MAX_LENGTH} (room for [CLS], "
                     f"a token and [SEP])")
  pipeline.max_seq_length = length
  pipeline.lower_case_input = bool(sentence_bert.get("do_lower_case", False))
  return pipeline


def check_lower_case_input(pipeline, do_lower_case):
  """Raises ValueError where sentence_bert_config.json lower-cases the text
  for a tokenizer that keeps case (and so accents): bert_tf's tokenizer
  lower-cases only with accents stripped."""
  if pipeline.lower_case_input and not do_lower_case:
    raise ValueError(
        f"{os.path.join(pipeline.transformer_dir, SENTENCE_BERT_CONFIG_FILE)}"
        f": do_lower_case lower-cases the text for a tokenizer that keeps "
        f"case and accents, which bert_tf's tokenizer does not reproduce")


def max_length_of(pipeline, model_max_length, max_position_embeddings):
  """The max length sentence-transformers tokenizes to: sentence_bert
  _config.json's max_seq_length, else tokenizer_config.json's
  model_max_length (None where unset: tokenizer_json), capped by the
  position table."""
  length = pipeline.max_seq_length or model_max_length or \
      max_position_embeddings
  return min(length, max_position_embeddings)


def _module_entries(directory):
  """(modules.json's path, its entries, their kinds: _MODULE_KINDS or
  _SPARSE_KINDS), or None where there is no modules.json."""
  modules_file = model_file(directory, MODULES_FILE)
  if modules_file is None:
    return None
  entries = read_json(modules_file)
  if not isinstance(entries, list) or not entries:
    raise ValueError(f"{modules_file}: expected a JSON list of modules")
  kinds = [_module_kind(entry, f"{modules_file}: module {index}")
           for index, entry in enumerate(entries)]
  return modules_file, entries, kinds


def _implied_type(entries):
  """The model type a folder without one in its config is: a
  SparseEncoder where its modules are SPLADE's, else an embedder."""
  if entries is not None and set(entries[2]) & set(_SPARSE_KINDS):
    return SPARSE_ENCODER
  return EMBEDDER


def _modules(directory, entries, model_type):
  """[(kind, folder)] of modules.json's entries (_module_entries), checked:
  in an order bert_tf reproduces for model_type (_check_order), then each
  folder inside the directory (model_files.model_folder); [] where there
  is no modules.json."""
  if entries is None:
    return []
  modules_file, entries, kinds = entries
  _check_order(kinds, model_type, modules_file)
  return [(kind, _module_folder(directory, entry.get("path", ""), kind,
                                f"{modules_file}: module {index}"))
          for index, (kind, entry) in enumerate(zip(kinds, entries))]


def _module_kind(entry, where):
  """A modules.json entry's kind (one of _MODULE_KINDS)."""
  if not isinstance(entry, dict) or not isinstance(entry.get("type"), str) \
      or not isinstance(entry.get("path", ""), str):
    raise ValueError(f"{where}: expected an object with \"type\" and "
                     f"\"path\" strings")
  module_type = entry["type"]
  kind = module_type.rpartition(".")[2]
  if not module_type.startswith("sentence_transformers.") or \
      kind not in (*_MODULE_KINDS, *_SPARSE_KINDS):
    raise ValueError(
        f"{where} ({module_type}) is not a module bert_tf reproduces "
        f"({', '.join((*_MODULE_KINDS, *_SPARSE_KINDS))} of "
        f"sentence_transformers)")
  return kind


def _check_order(kinds, model_type, modules_file):
  """Raises ValueError unless the modules are Transformer, Pooling, any
  Dense, then an optional Normalize (an embedder), the Transformer alone
  (a CrossEncoder), or a Transformer or MLMTransformer then SpladePooling
  (a SparseEncoder)."""
  if model_type == SPARSE_ENCODER:
    if kinds != ["Router"] and (
        kinds[0] not in ("Transformer", "MLMTransformer") or
        kinds[1:] != ["SpladePooling"]):
      raise ValueError(f"{modules_file}: modules {_listed(kinds)}; bert_tf "
                       f"reproduces a SparseEncoder of a Transformer (or "
                       f"MLMTransformer) then SpladePooling, or of a Router")
    return
  if set(kinds) & set(_SPARSE_KINDS):
    raise ValueError(f"{modules_file}: modules {_listed(kinds)} of a "
                     f"{model_type}; bert_tf reproduces "
                     f"{', '.join(_SPARSE_KINDS)} in a {SPARSE_ENCODER}")
  if kinds[0] != "Transformer" or "Transformer" in kinds[1:]:
    raise ValueError(f"{modules_file}: the first module, and only it, must "
                     f"be a Transformer (the BERT)")
  if model_type == CROSS_ENCODER:
    if len(kinds) > 1:
      raise ValueError(f"{modules_file}: a CrossEncoder of more than its "
                       f"Transformer module")
    return
  rest = kinds[1:]
  expected = ["Pooling"] + ["Dense"] * rest.count("Dense") + (
      ["Normalize"] if "Normalize" in rest else [])
  if rest != expected:
    raise ValueError(
        f"{modules_file}: modules {_listed(kinds)}; bert_tf reproduces "
        f"Transformer, Pooling, any Dense, then an optional Normalize")


def _listed(kinds):
  """The first _LISTED kinds, for a message."""
  listed = ", ".join(kinds[:_LISTED])
  if len(kinds) > _LISTED:
    listed += f", ... ({len(kinds)} in all)"
  return listed


def _module_folder(directory, path, kind, where):
  """A module's folder (model_files.model_folder); a Pooling or Dense
  module's is its own, not the root's, whose config.json is the BERT's."""
  folder = model_folder(directory, path, where)
  if kind in ("Pooling", "Dense", "SpladePooling") and folder == directory:
    raise ValueError(f"{where}: a {kind} module in the folder's root, whose "
                     f"{MODULE_CONFIG_FILE} is the BERT's; a {kind} module "
                     f"has a folder of its own")
  return folder


def _read_modules(pipeline, modules):
  """Sets an embedder's pooling, Dense modules and Normalize from its
  modules (in _check_order's order)."""
  for kind, module_dir in modules[1:]:
    if kind == "Pooling":
      pipeline.pooling, pipeline.include_prompt = _pooling(module_dir)
    elif kind == "Dense":
      pipeline.dense.append(_dense(module_dir))
    else:
      pipeline.normalize = True


def _pooling(module_dir):
  """(pooling modes, include_prompt) of a Pooling module's config.json
  (either layout)."""
  values = json_object(module_dir, MODULE_CONFIG_FILE)
  where = os.path.join(module_dir, MODULE_CONFIG_FILE)
  if values is None:
    raise FileNotFoundError(f"{where}: missing; a Pooling module has one")
  include_prompt = values.get("include_prompt", True)
  if not isinstance(include_prompt, bool):
    raise ValueError(f"{where}: include_prompt is {include_prompt!r}; "
                     f"expected true or false")
  modes = values.get("pooling_mode")
  if modes is None:
    modes = [mode for key, mode in _LEGACY_POOLING_KEYS.items()
             if values.get(key)] or ["mean"]
  return check_pooling(modes, where), include_prompt


def _dense(module_dir):
  """A Dense module's DenseModule, its weights file checked."""
  values = json_object(module_dir, MODULE_CONFIG_FILE)
  where = os.path.join(module_dir, MODULE_CONFIG_FILE)
  if values is None:
    raise FileNotFoundError(f"{where}: missing; a Dense module has one")
  for field in ("module_input_name", "module_output_name"):
    if values.get(field, "sentence_embedding") != "sentence_embedding":
      raise ValueError(f"{where}: {field} {values[field]!r}; bert_tf "
                       f"reproduces a Dense on the sentence embedding")
  units = values.get("out_features")
  if not _is_count(units) or not _is_count(values.get("in_features")):
    raise ValueError(f"{where}: in_features and out_features must be whole "
                     f"numbers of at least 1")
  activation = activation_of(values.get(
      "activation_function", TORCH_ACTIVATIONS["tanh"]), where,
                             "activation_function")
  weights_file = model_file(module_dir, DENSE_WEIGHTS_FILE)
  if weights_file is None:
    pickle = os.path.join(module_dir, _PICKLE_WEIGHTS_FILE)
    if storage.exists(pickle):
      raise ValueError(
          f"{pickle}: PyTorch pickle weights, which bert_tf does not "
          f"unpickle (loading a pickle can run any code); save the model "
          f"once with sentence-transformers (model.save(dir)), which writes "
          f"{DENSE_WEIGHTS_FILE}")
    raise FileNotFoundError(f"{os.path.join(module_dir, DENSE_WEIGHTS_FILE)}"
                            f": missing; a Dense module has its weights")
  use_bias = bool(values.get("bias", True))
  _check_dense_weights(weights_file, values["in_features"], units, use_bias)
  return DenseModule(in_features=values["in_features"], units=units,
                     activation=activation, use_bias=use_bias,
                     weights_file=weights_file)


def _check_dense_weights(weights_file, in_features, units, use_bias):
  """Raises ValueError, from the file's header alone, unless it holds the
  weights its config.json describes: before a model of that size is
  built."""
  headers = tensor_headers(weights_file)
  expected = {DENSE_WEIGHT: [units, in_features]}
  if use_bias:
    expected[DENSE_BIAS] = [units]
  for name, shape in expected.items():
    if name not in headers:
      raise ValueError(f"{weights_file}: no tensor {name}")
    if headers[name][1] != shape:
      raise ValueError(f"{weights_file}: tensor {name} is shaped "
                       f"{headers[name][1]}, but its config.json makes it "
                       f"{shape}")


def _optional_count(values, field, where):
  """A field of config_sentence_transformers.json that is a whole number
  of at least 1 where set (max_active_dims, truncate_dim), or None."""
  value = values.get(field)
  if value is not None and not _is_count(value):
    raise ValueError(f"{where}: {field} is {value!r}; expected a whole "
                     f"number of at least 1, or null")
  return value


def _prompts(values, where, implicit=()):
  """(prompts, default_prompt_name) of config_sentence_transformers.json;
  a default may name one of the `implicit` prompts (a SparseEncoder's
  "query" and "document", "" unless set)."""
  prompts = values.get("prompts") or {}
  if not isinstance(prompts, dict) or not all(
      isinstance(name, str) and isinstance(prompt, str)
      for name, prompt in prompts.items()):
    raise ValueError(f"{where}: prompts must map names to strings")
  default = values.get("default_prompt_name")
  if default is not None and default not in (*prompts, *implicit):
    raise ValueError(f"{where}: default_prompt_name {default!r} is not one "
                     f"of its prompts ({', '.join(prompts) or 'none'})")
  return dict(prompts), default


def _is_count(value):
  return isinstance(value, int) and not isinstance(value, bool) and value >= 1


