"""A bert_tf model written as a model directory in either format
(BertKerasModel.save_pretrained): the files convert() writes, through the
same code, from the model's own variables, head and vocabulary."""

import os
import shutil
import tempfile

import keras
import numpy as np

from bert_tf import vocabulary
from bert_tf.checkpoints import conversion, huggingface, tf_checkpoints
from bert_tf.checkpoints.tokenizer_json import (TOKENIZER_FILE,
                                                is_tokenizer_json)


def save_pretrained(model, directory, output_format, vocab_file=None,
                    architecture=None):
  """Writes `model` into `directory` (new or empty) in output_format.

  Args:
    model: a bert_tf model that names its transformers classes
      (`huggingface_architectures`, the first its default).
    output_format: conversion.HUGGINGFACE or conversion.ORIGINAL.
    vocab_file: the vocabulary of a model without a preprocessor.
    architecture: one of the model's huggingface_architectures.
  """
  name = f"{type(model).__name__}.save_pretrained"
  if output_format not in conversion.FORMATS:
    raise ValueError(f"{name}: format={output_format!r}; expected one of "
                     f"{', '.join(conversion.FORMATS)}")
  architecture = _architecture(model, architecture, name)
  if model.quantized_to:
    raise ValueError(f"{name}: the model is quantized ({model.quantized_to})"
                     "; a model directory holds float weights: save it "
                     "before quantize()")
  conversion.check_output_dir(directory)
  labels = getattr(model, "labels", None) or huggingface.default_labels(
      architecture, getattr(model, "num_labels", 0))
  with tempfile.TemporaryDirectory() as scratch:
    vocab_file, do_lower_case = _vocabulary(model, vocab_file, scratch, name)
    vocabulary.check_vocab_fits(vocab_file, model.config.vocab_size,
                                f"{name}: the model's config")
    files = conversion.ModelFiles(
        model.config, architecture, _tensors(model, architecture), labels,
        getattr(model, "problem_type", None), vocab_file, do_lower_case,
        scratch)
    conversion.write_model_directory(directory, output_format, files)


def _architecture(model, architecture, name):
  """The transformers class to write the model as."""
  known = getattr(model, "huggingface_architectures", ())
  if not known:
    raise ValueError(f"{name}: {type(model).__name__} has no transformers "
                     "class to be saved as")
  if architecture is None:
    return known[0]
  if architecture not in known:
    raise ValueError(f"{name}: architecture={architecture!r}; expected one "
                     f"of {', '.join(known)}")
  return architecture


def _tensors(model, architecture):
  """{original name: float32 array} of the architecture's tensors."""
  variables = tf_checkpoints.checkpoint_variables(model)
  names = huggingface.original_names(
      model.config, huggingface.ARCHITECTURES[architecture])
  return {name: np.asarray(keras.ops.convert_to_numpy(variables[name]),
                           np.float32) for name in names}


def _vocabulary(model, vocab_file, scratch, name):
  """(vocabulary file, do_lower_case): the preprocessor's (its .keras
  asset), else vocab_file, copied into `scratch` under its kind's name (a
  folder's tokenizer.json is taken from there)."""
  preprocessor = getattr(model, "preprocessor", None)
  if preprocessor is not None:
    if vocab_file is not None:
      raise ValueError(f"{name}: vocab_file={vocab_file} for a model whose "
                       "preprocessor holds its vocabulary")
    preprocessor.save_assets(scratch)
    (asset,) = os.listdir(scratch)
    return os.path.join(scratch, asset), preprocessor.do_lower_case
  if vocab_file is None:
    raise ValueError(f"{name}: {type(model).__name__} has no vocabulary "
                     "(no preprocessor): pass vocab_file=...")
  if not os.path.isfile(vocab_file):
    raise FileNotFoundError(f"{name}: vocab_file={vocab_file}: no such file")
  copy = os.path.join(scratch, TOKENIZER_FILE if is_tokenizer_json(vocab_file)
                      else conversion.VOCAB_FILE)
  shutil.copyfile(vocab_file, copy)
  return copy, vocabulary.vocab_is_lower_cased(copy)
