"""A sentence-transformers folder's weights under one reader: the BERT's,
its Dense modules' and a Router's SparseStaticEmbedding's, so that one
load_checkpoint loads a BertEmbedder or a BertSparseEncoder."""


import os

import numpy as np

from bert_tf.checkpoints.names import dense_module_name
from bert_tf.checkpoints.safetensors_files import read_tensor
from bert_tf.checkpoints.sentence_transformers import (DENSE_BIAS,
                                                    DENSE_WEIGHT)
from bert_tf.checkpoints.sentence_transformers.module_files import (
    MODULE_CONFIG_FILE)
from bert_tf.checkpoints.sentence_transformers.sparse_modules import (
    STATIC_WEIGHT)

# The name a Router's SparseStaticEmbedding weights are read under.
STATIC_QUERY_WEIGHT = "sentence_transformers/query/static_weight"


class PipelineReader:
  """A folder's reader (huggingface.reader.HuggingFaceFolder) with its Dense
  modules' weights added under names.dense_module_name, so that
  load_checkpoint loads a whole BertEmbedder from one reader."""

  def __init__(self, reader, pipeline, hidden_size, vocab_size):
    self._reader = reader
    self._dense = pipeline.dense
    self._static = pipeline.static_query
    if self._static is not None and self._static.size != vocab_size:
      raise ValueError(f"{self._static.weights_file}: tensor "
                       f"{STATIC_WEIGHT} holds {self._static.size} weights; "
                       f"the BERT's vocab_size is {vocab_size}")
    self._read = {}  # index: its tensors (dense_tensors), once read
    width = hidden_size * len(pipeline.pooling)
    for module in self._dense:
      if module.in_features != width:
        config_file = os.path.join(os.path.dirname(module.weights_file),
                                   MODULE_CONFIG_FILE)
        raise ValueError(f"{config_file}: in_features {module.in_features}, "
                         f"but the modules before it give {width} values")
      width = module.units
    # {name: (index, "kernel" or "bias")} of the Dense modules' tensors.
    self._names = {dense_module_name(index, variable): (index, variable)
                   for index, module in enumerate(self._dense)
                   for variable in (("kernel", "bias") if module.use_bias
                                    else ("kernel",))}

  def __getattr__(self, name):  # labels, architecture_name, ...
    return getattr(self._reader, name)

  def _shapes(self):
    shapes = {name: ([self._dense[index].in_features,
                      self._dense[index].units]
                     if variable == "kernel" else [self._dense[index].units])
              for name, (index, variable) in self._names.items()}
    if self._static is not None:
      shapes[STATIC_QUERY_WEIGHT] = [self._static.size]
    return shapes

  def get_variable_to_shape_map(self):
    return {**self._reader.get_variable_to_shape_map(), **self._shapes()}

  def get_variable_to_dtype_map(self):
    return {**self._reader.get_variable_to_dtype_map(),
            **dict.fromkeys(self._shapes(), np.dtype(np.float32))}

  def get_tensor(self, name):
    if name == STATIC_QUERY_WEIGHT and self._static is not None:
      return read_tensor(self._static.weights_file,
                         STATIC_WEIGHT).astype(np.float32)
    if name not in self._names:
      return self._reader.get_tensor(name)
    index, variable = self._names[name]
    if index not in self._read:  # each module's file read once
      self._read[index] = dense_tensors(self._dense[index])
    return self._read[index][variable]


def dense_tensors(module):
  """{"kernel": [in, out], "bias": [out]} of a Dense module (bias where it
  has one), numpy float32; their shapes were checked on opening
  (_check_dense_weights)."""
  tensors = {"kernel": np.ascontiguousarray(read_tensor(
      module.weights_file, DENSE_WEIGHT).astype(np.float32).T)}
  if module.use_bias:
    tensors["bias"] = read_tensor(module.weights_file,
                                  DENSE_BIAS).astype(np.float32)
  return tensors
