"""A sentence-transformers SparseEncoder's own modules, read: SpladePooling,
and the Router of inference-free SPLADE (a SparseStaticEmbedding query
route, a Transformer and SpladePooling document route).

Only what bert_tf reproduces is read; anything else is refused in one line
naming the file and the field or module.
"""

import dataclasses
import os
from typing import Optional

from bert_tf.checkpoints.safetensors_files import tensor_headers
from bert_tf.checkpoints.sentence_transformers.module_files import (
    DENSE_WEIGHTS_FILE, MODULE_CONFIG_FILE, json_object)
from bert_tf.files.model_files import model_file, model_folder

# The transformer_task of a SparseEncoder's Transformer.
FILL_MASK = "fill-mask"
# SpladePooling's pooling_strategy and activation_function values.
SPLADE_POOLING_STRATEGIES = ("max", "sum")
SPLADE_ACTIVATIONS = ("relu", "log1p_relu")
# The modules of a Router's routes (router_config.json's types).
_ROUTE_KINDS = ("Transformer", "MLMTransformer", "SpladePooling",
                "SparseStaticEmbedding")
ROUTER_CONFIG_FILE = "router_config.json"
# A SparseStaticEmbedding's weights: one per vocabulary token.
STATIC_WEIGHT = "weight"


@dataclasses.dataclass(frozen=True, kw_only=True)
class SpladeModule:
  """A SpladePooling module: pooling_strategy (SPLADE_POOLING_STRATEGIES)
  and activation (SPLADE_ACTIVATIONS, its activation_function)."""
  pooling_strategy: str
  activation: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class StaticEmbeddingModule:
  """A SparseStaticEmbedding module (a Router's query route): its folder,
  with its tokenizer files, its weights file and their number (one per
  vocabulary token)."""
  folder: str
  weights_file: str
  size: int


# What sentence-transformers pools a SparseEncoder folder without
# modules.json with.
DEFAULT_SPLADE = SpladeModule(pooling_strategy="max", activation="relu")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Router:
  """An inference-free SPLADE Router: its query route (a
  StaticEmbeddingModule), its document route's Transformer (kind and
  folder) and SpladeModule, and default_route: the route encode takes
  without one named ("query", "document"), or None: encode needs one
  named."""
  static_query: StaticEmbeddingModule
  transformer_kind: str
  transformer_dir: str
  splade: SpladeModule
  default_route: Optional[str]


def read_splade(module_dir):
  """The SpladeModule of a SpladePooling module's config.json."""
  values = json_object(module_dir, MODULE_CONFIG_FILE)
  where = os.path.join(module_dir, MODULE_CONFIG_FILE)
  if values is None:
    raise FileNotFoundError(f"{where}: missing; a SpladePooling module has "
                            f"one")
  fields = {"pooling_strategy": SPLADE_POOLING_STRATEGIES,
            "activation_function": SPLADE_ACTIVATIONS}
  for field, expected in fields.items():
    if values.get(field, expected[0]) not in expected:
      raise ValueError(f"{where}: {field} {values[field]!r} is not one "
                       f"bert_tf reproduces ({', '.join(expected)})")
  for field in ("embedding_dimension", "word_embedding_dimension",
                "chunk_size"):
    value = values.get(field)
    if value is not None and (isinstance(value, bool) or
                              not isinstance(value, int)):
      raise ValueError(f"{where}: {field} is {value!r}; expected an "
                       f"integer or null")
  return SpladeModule(
      pooling_strategy=values.get("pooling_strategy",
                                  DEFAULT_SPLADE.pooling_strategy),
      activation=values.get("activation_function", DEFAULT_SPLADE.activation))


def check_fill_mask(sentence_bert, kind, where):
  """Raises ValueError unless a SparseEncoder's Transformer gives the
  masked-LM logits: an MLMTransformer (fill-mask unless it says
  otherwise), or a Transformer whose transformer_task is fill-mask."""
  task = sentence_bert.get("transformer_task",
                           FILL_MASK if kind == "MLMTransformer" else None)
  if task != FILL_MASK:
    raise ValueError(f"{where}: transformer_task {task!r}; a "
                     f"SparseEncoder's {kind} is {FILL_MASK!r} (the "
                     f"masked-LM logits SpladePooling takes)")


def read_router(router_dir):
  """The Router of a Router module's folder (router_config.json).

  bert_tf reproduces the inference-free SPLADE router
  (Router.for_query_document): a query route of SparseStaticEmbedding and
  a document route of a Transformer (or MLMTransformer) then
  SpladePooling, without route_mappings.
  """
  where = os.path.join(router_dir, ROUTER_CONFIG_FILE)
  values = json_object(router_dir, ROUTER_CONFIG_FILE)
  if values is None:
    raise FileNotFoundError(f"{where}: missing; a Router module has one")
  types, structure = values.get("types"), values.get("structure")
  parameters = values.get("parameters", {})
  if not isinstance(types, dict) or not isinstance(structure, dict) or \
      not isinstance(parameters, dict):
    raise ValueError(f"{where}: expected \"types\" and \"structure\" "
                     f"objects (and \"parameters\")")
  if sorted(structure) != ["document", "query"]:
    raise ValueError(f"{where}: routes {', '.join(map(str, structure))}; "
                     f"bert_tf reproduces a query and a document route")
  routes = {route: [_route_module(router_dir, types, module_id,
                                  f"{where}: route {route!r}")
                    for module_id in _route_ids(structure[route], where)]
            for route in structure}
  kinds = {route: [kind for kind, _ in modules]
           for route, modules in routes.items()}
  if kinds["query"] != ["SparseStaticEmbedding"] or \
      kinds["document"][0] not in ("Transformer", "MLMTransformer") or \
      kinds["document"][1:] != ["SpladePooling"]:
    raise ValueError(
        f"{where}: routes query ({', '.join(kinds['query'])}) and document "
        f"({', '.join(kinds['document'])}); bert_tf reproduces a query route "
        f"of SparseStaticEmbedding and a document route of a Transformer "
        f"(or MLMTransformer) then SpladePooling")
  return Router(
      static_query=_static_embedding(routes["query"][0][1]),
      transformer_kind=kinds["document"][0],
      transformer_dir=routes["document"][0][1],
      splade=read_splade(routes["document"][1][1]),
      default_route=_default_route(parameters, list(structure), where))


def _route_ids(module_ids, where):
  if not isinstance(module_ids, list) or not module_ids or \
      not all(isinstance(module_id, str) for module_id in module_ids):
    raise ValueError(f"{where}: a route is a list of module names")
  return module_ids


def _route_module(router_dir, types, module_id, where):
  """(kind, folder) of a route's module, its type checked (one of
  _ROUTE_KINDS of sentence_transformers) and its folder inside."""
  module_type = types.get(module_id)
  kind = module_type.rpartition(".")[2] if isinstance(module_type,
                                                     str) else None
  if not module_type or not module_type.startswith(
      "sentence_transformers.") or kind not in _ROUTE_KINDS:
    raise ValueError(f"{where}: module {module_id!r} ({module_type}) is not "
                     f"one bert_tf reproduces in a route "
                     f"({', '.join(_ROUTE_KINDS)} of sentence_transformers)")
  folder = model_folder(router_dir, module_id, where)
  if folder == router_dir:
    raise ValueError(f"{where}: module {module_id!r} in the Router's own "
                     f"folder; each module has a folder of its own")
  return kind, folder


def _default_route(parameters, routes, where):
  """The route encode takes without one named, as the Router chooses it:
  default_route, else the first route where allow_empty_key (true unless
  set), else None."""
  if parameters.get("route_mappings"):
    raise ValueError(f"{where}: route_mappings "
                     f"{parameters['route_mappings']!r}; bert_tf routes by "
                     f"task alone (query, document)")
  allow_empty_key = parameters.get("allow_empty_key", True)
  if not isinstance(allow_empty_key, bool):
    raise ValueError(f"{where}: allow_empty_key is {allow_empty_key!r}; "
                     f"expected true or false")
  default = parameters.get("default_route")
  if default is not None and default not in routes:
    raise ValueError(f"{where}: default_route {default!r} is not one of its "
                     f"routes ({', '.join(routes)})")
  if default is None and allow_empty_key:
    return routes[0]
  return default


def _static_embedding(module_dir):
  """The StaticEmbeddingModule of a SparseStaticEmbedding's folder."""
  where = os.path.join(module_dir, MODULE_CONFIG_FILE)
  values = json_object(module_dir, MODULE_CONFIG_FILE) or {}
  if values.get("path") is not None:
    raise ValueError(f"{where}: path {values['path']!r}; bert_tf reads a "
                     f"SparseStaticEmbedding's weights from its "
                     f"{DENSE_WEIGHTS_FILE}")
  weights_file = model_file(module_dir, DENSE_WEIGHTS_FILE)
  if weights_file is None:
    raise FileNotFoundError(f"{os.path.join(module_dir, DENSE_WEIGHTS_FILE)}"
                            f": missing; a SparseStaticEmbedding has its "
                            f"weights")
  headers = tensor_headers(weights_file)
  if STATIC_WEIGHT not in headers or len(headers[STATIC_WEIGHT][1]) != 1:
    raise ValueError(f"{weights_file}: expected a tensor {STATIC_WEIGHT} "
                     f"[vocab_size]")
  return StaticEmbeddingModule(folder=module_dir, weights_file=weights_file,
                               size=headers[STATIC_WEIGHT][1][0])
