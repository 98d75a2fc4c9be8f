"""The files sentence-transformers writes for a pipeline, written by bert_tf
beside a Hugging Face folder (BertEmbedder.save_pretrained, a cross-encoder's
save): modules.json, each module's settings, the Dense weights."""


import json

import numpy as np

from bert_tf.checkpoints.sentence_transformers import (
    CROSS_ENCODER, DEFAULT_SIMILARITY, DENSE_BIAS, DENSE_WEIGHT,
    DENSE_WEIGHTS_FILE, EMBEDDER, MODEL_CONFIG_FILE, MODULE_TYPES,
    MODULES_FILE, SENTENCE_BERT_CONFIG_FILE)
from bert_tf.checkpoints.sentence_transformers.activations import (
    TORCH_ACTIVATIONS)


def folder_files(pipeline, hidden_size, dense_weights):
  """{path inside the folder: bytes} of the files sentence-transformers 6
  writes beside a Hugging Face folder (the Transformer module, at the
  root) for `pipeline`: modules.json (naming the modules by MODULE_TYPES,
  which sentence-transformers 5 reads too), each module's config (and a
  Dense module's model.safetensors), sentence_bert_config.json and
  config_sentence_transformers.json. (The max length goes into
  tokenizer_config.json, written with the Hugging Face files.)

  Args:
    pipeline: a Pipeline (transformer_dir and max_seq_length unused).
    hidden_size: the encoder's width.
    dense_weights: per Dense module, {"kernel": [in, out], "bias": [out]}
      (bias where it has one), numpy.
  """
  from safetensors.numpy import save  # pylint: disable=g-import-not-at-top
  files = {}
  modules = [("Transformer", "")]
  if pipeline.model_type == EMBEDDER:
    modules.append(("Pooling", "1_Pooling"))
    files["1_Pooling/config.json"] = _json_bytes({
        "embedding_dimension": hidden_size,
        "pooling_mode": (pipeline.pooling[0] if len(pipeline.pooling) == 1
                         else list(pipeline.pooling)),
        "include_prompt": True}, indent=4)
    for module, weights in zip(pipeline.dense, dense_weights):
      path = f"{len(modules)}_Dense"
      modules.append(("Dense", path))
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
      modules.append(("Normalize", path))
      files[f"{path}/config.json"] = _json_bytes(_SENTENCE_EMBEDDING_IO,
                                                 indent=4)
  files[MODULES_FILE] = _json_bytes([
      {"idx": index, "name": str(index), "path": path,
       "type": MODULE_TYPES[kind]}
      for index, (kind, path) in enumerate(modules)])
  files[SENTENCE_BERT_CONFIG_FILE] = _json_bytes(
      _TRANSFORMER_TASKS[pipeline.model_type], indent=4)
  model_config = {"model_type": pipeline.model_type,
                  "prompts": pipeline.prompts,
                  "default_prompt_name": pipeline.default_prompt_name}
  if pipeline.model_type == EMBEDDER:
    model_config["similarity_fn_name"] = pipeline.similarity or \
        DEFAULT_SIMILARITY
  else:
    model_config["activation_fn"] = TORCH_ACTIVATIONS[pipeline.activation]
  files[MODEL_CONFIG_FILE] = _json_bytes(model_config)
  return files


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
}


def _json_bytes(values, indent=2):
  return (json.dumps(values, indent=indent) + "\n").encode("utf-8")
