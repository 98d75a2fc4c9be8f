"""The files sentence-transformers writes for a pipeline, written by bert_tf
beside a Hugging Face folder (BertEmbedder.save_pretrained, a cross-encoder's
or a sparse encoder's save, a Router's): modules.json, each module's
settings, the Dense and static weights."""


import json

import numpy as np

from bert_tf.checkpoints.sentence_transformers import (
    CROSS_ENCODER, DEFAULT_SIMILARITY, DENSE_BIAS, DENSE_WEIGHT, EMBEDDER,
    MODEL_CONFIG_FILE, MODULE_TYPES, MODULES_FILE, SENTENCE_BERT_CONFIG_FILE,
    SPARSE_ENCODER)
from bert_tf.checkpoints.sentence_transformers.activations import (
    TORCH_ACTIVATIONS)
from bert_tf.checkpoints.sentence_transformers.module_files import (
    DENSE_WEIGHTS_FILE, MODULE_CONFIG_FILE)
from bert_tf.checkpoints.sentence_transformers.sparse_modules import (
    FILL_MASK, ROUTER_CONFIG_FILE, STATIC_WEIGHT)


def folder_files(pipeline, hidden_size, dense_weights, static_weight=None):
  """{path inside the folder: bytes} of the files sentence-transformers 6
  writes beside a Hugging Face folder (the Transformer module, in
  transformer_folder) for `pipeline`: modules.json (naming the modules by
  MODULE_TYPES, which sentence-transformers 5 reads too; a Router by its
  own layout, _router_files), each module's config (and a Dense module's
  model.safetensors), sentence_bert_config.json and
  config_sentence_transformers.json. (The max length goes into
  tokenizer_config.json, written with the Hugging Face files.)

  Args:
    pipeline: a Pipeline (transformer_dir, max_seq_length and static_query's
      files unused).
    hidden_size: the encoder's width.
    dense_weights: per Dense module, {"kernel": [in, out], "bias": [out]}
      (bias where it has one), numpy.
    static_weight: a Router's query route weights [vocab_size], numpy.
  """
  if pipeline.static_query is not None:
    modules, files = [(_ROUTER_TYPE, "")], _router_files(pipeline,
                                                         static_weight)
  else:
    modules, files = _module_files(pipeline, hidden_size, dense_weights)
  files[MODULES_FILE] = _json_bytes([
      {"idx": index, "name": str(index), "path": path, "type": module_type}
      for index, (module_type, path) in enumerate(modules)])
  files[_inside(transformer_folder(pipeline), SENTENCE_BERT_CONFIG_FILE)] = \
      _json_bytes(_TRANSFORMER_TASKS[pipeline.model_type], indent=4)
  model_config = {"model_type": pipeline.model_type,
                  "prompts": pipeline.prompts,
                  "default_prompt_name": pipeline.default_prompt_name}
  if pipeline.model_type == EMBEDDER:
    model_config["similarity_fn_name"] = pipeline.similarity or \
        DEFAULT_SIMILARITY
    if pipeline.truncate_dim is not None:
      model_config["truncate_dim"] = pipeline.truncate_dim
  elif pipeline.model_type == SPARSE_ENCODER:
    model_config["similarity_fn_name"] = pipeline.similarity
    if pipeline.max_active_dims is not None:
      model_config["max_active_dims"] = pipeline.max_active_dims
  else:
    model_config["activation_fn"] = TORCH_ACTIVATIONS[pipeline.activation]
  files[MODEL_CONFIG_FILE] = _json_bytes(model_config)
  return files


def transformer_folder(pipeline):
  """The folder the Hugging Face files go into: a Router's document
  route's Transformer, else the root ("")."""
  return _ROUTER_MODULES[1] if pipeline.static_query is not None else ""


def tokenizer_folders(pipeline):
  """{folder: model_max_length} of the folders, beside the Transformer's,
  that hold the tokenizer's files: a Router's query route, its max length
  (transformers' unset one where it has none)."""
  if pipeline.static_query is None:
    return {}
  return {_ROUTER_MODULES[0]: pipeline.query_max_length or
                              _UNSET_MAX_LENGTH}


def _module_files(pipeline, hidden_size, dense_weights):
  """([(module type, folder)], {path: bytes}): the Transformer at the
  root and the modules after it, and those modules' files."""
  from safetensors.numpy import save  # pylint: disable=g-import-not-at-top
  files = {}
  modules = [(MODULE_TYPES["Transformer"], "")]
  if pipeline.model_type == EMBEDDER:
    modules.append((MODULE_TYPES["Pooling"], "1_Pooling"))
    files["1_Pooling/config.json"] = _json_bytes({
        "embedding_dimension": hidden_size,
        "pooling_mode": (pipeline.pooling[0] if len(pipeline.pooling) == 1
                         else list(pipeline.pooling)),
        "include_prompt": pipeline.include_prompt}, indent=4)
    for module, weights in zip(pipeline.dense, dense_weights):
      path = f"{len(modules)}_Dense"
      modules.append((MODULE_TYPES["Dense"], path))
      files[f"{path}/config.json"] = _json_bytes({
          "in_features": module.in_features, "out_features": module.units,
          "bias": module.use_bias,
          "activation_function": TORCH_ACTIVATIONS[module.activation],
          **_SENTENCE_EMBEDDING_IO}, indent=4)
      stored = {DENSE_WEIGHT: np.ascontiguousarray(
          weights["kernel"].T, np.float32)}
      if module.use_bias:
        stored[DENSE_BIAS] = np.asarray(weights["bias"], np.float32)
      files[f"{path}/{DENSE_WEIGHTS_FILE}"] = save(stored)
    if pipeline.normalize:
      path = f"{len(modules)}_Normalize"
      modules.append((MODULE_TYPES["Normalize"], path))
      files[f"{path}/config.json"] = _json_bytes(_SENTENCE_EMBEDDING_IO,
                                                 indent=4)
  elif pipeline.model_type == SPARSE_ENCODER:
    modules.append((MODULE_TYPES["SpladePooling"], "1_SpladePooling"))
    files["1_SpladePooling/config.json"] = _splade_config(pipeline)
  return modules, files


def _router_files(pipeline, static_weight):
  """{path: bytes} of an inference-free SPLADE Router as
  sentence-transformers 6 saves Router.for_query_document: router_config
  .json, the query route's SparseStaticEmbedding (its config.json and
  weights; its tokenizer files go in with the Hugging Face files,
  tokenizer_folders) and the document route's SpladePooling (its
  Transformer is transformer_folder)."""
  from safetensors.numpy import save  # pylint: disable=g-import-not-at-top
  static, transformer, splade = _ROUTER_MODULES
  default_route = pipeline.default_route
  return {
      ROUTER_CONFIG_FILE: _json_bytes({
          "types": dict(zip(_ROUTER_MODULES, _ROUTE_TYPES)),
          "structure": {"query": [static],
                        "document": [transformer, splade]},
          "parameters": {"default_route": default_route,
                         "allow_empty_key": default_route is not None,
                         "route_mappings": {}}}, indent=4),
      f"{static}/{MODULE_CONFIG_FILE}": _json_bytes({"frozen": False},
                                                    indent=4),
      f"{static}/{DENSE_WEIGHTS_FILE}": save(
          {STATIC_WEIGHT: np.asarray(static_weight, np.float32)}),
      f"{splade}/{MODULE_CONFIG_FILE}": _splade_config(pipeline)}


def _splade_config(pipeline):
  """A SpladePooling module's config.json."""
  return _json_bytes({
      "pooling_strategy": pipeline.splade.pooling_strategy,
      "activation_function": pipeline.splade.activation,
      "embedding_dimension": None}, indent=4)


def _inside(folder, name):
  """The path of a file in a folder of the output ("": its root)."""
  return f"{folder}/{name}" if folder else name


# A Router's modules, as sentence-transformers names their folders
# (<route>_<index>_<class>), and their types: sentence-transformers 6's
# own, which 5.7 reads too.
_ROUTER_MODULES = ("query_0_SparseStaticEmbedding", "document_0_Transformer",
                   "document_1_SpladePooling")
_ROUTE_TYPES = (
    "sentence_transformers.sparse_encoder.modules.sparse_static_embedding."
    "SparseStaticEmbedding",
    "sentence_transformers.base.modules.transformer.Transformer",
    "sentence_transformers.sparse_encoder.modules.splade_pooling."
    "SpladePooling")
_ROUTER_TYPE = "sentence_transformers.base.modules.router.Router"
# transformers' model_max_length where a tokenizer has none: a
# SparseStaticEmbedding cuts no query.
_UNSET_MAX_LENGTH = int(1e30)


# What a Dense or Normalize module reads and writes.
_SENTENCE_EMBEDDING_IO = {"module_input_name": "sentence_embedding",
                          "module_output_name": "sentence_embedding"}


# sentence_bert_config.json of the Transformer module, by model type.
_TRANSFORMER_TASKS = {
    EMBEDDER: {"transformer_task": "feature-extraction",
               "modality_config": {"text": {
                   "method": "forward",
                   "method_output_name": "last_hidden_state"}},
               "module_output_name": "token_embeddings"},
    CROSS_ENCODER: {"transformer_task": "sequence-classification",
                    "modality_config": {"text": {
                        "method": "forward", "method_output_name": "logits"}},
                    "module_output_name": "scores"},
    SPARSE_ENCODER: {"transformer_task": FILL_MASK,
                     "modality_config": {"text": {
                         "method": "forward", "method_output_name": "logits"}},
                     "module_output_name": "token_embeddings"},
}


def _json_bytes(values, indent=2):
  return (json.dumps(values, indent=indent) + "\n").encode("utf-8")
