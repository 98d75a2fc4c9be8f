"""A bert_tf model written as a model directory
(BertKerasModel.save_pretrained): the files convert() writes, through the
same code, from the model's own variables, head and vocabulary; or a
sentence-transformers folder (an embedder, a cross-encoder, a sparse
encoder): a Hugging Face folder with its modules beside it (or, a Router's,
in its document route)."""

import os
import shutil
import tempfile

import keras
import numpy as np

from bert_tf.checkpoints import (directory_writer, huggingface,
                                 model_directory, model_weights,
                                 sentence_transformers)
from bert_tf.checkpoints.folder_vocabulary import VOCAB_FILE
from bert_tf.checkpoints.sentence_transformers import writer
from bert_tf.files.model_files import model_file
from bert_tf.wordpiece import rules, tokenizer_json, vocabulary
from bert_tf.wordpiece.tokenizer_json import (TOKENIZER_FILE,
                                                is_tokenizer_json)

SENTENCE_TRANSFORMERS = "sentence-transformers"
FORMATS = (*model_directory.FORMATS, SENTENCE_TRANSFORMERS)


def save_pretrained(model, directory, output_format, vocab_file=None,
                    architecture=None):
  """Writes `model` into `directory` (new or empty) in output_format.

  Args:
    model: a bert_tf model that names its transformers classes
      (`huggingface_architectures`, the first its default).
    output_format: one of FORMATS: SENTENCE_TRANSFORMERS for a model with
      a sentence_transformers_pipeline() (an embedder, which saves in no
      other, or a classifier as a CrossEncoder).
    vocab_file: the vocabulary of a model without a preprocessor.
    architecture: one of the model's huggingface_architectures.
  """
  name = f"{type(model).__name__}.save_pretrained"
  if output_format not in FORMATS:
    raise ValueError(f"{name}: format={output_format!r}; expected one of "
                     f"{', '.join(FORMATS)}")
  if not isinstance(directory, (str, os.PathLike)):
    raise TypeError(f"{name}: directory={directory!r}; expected a path (a "
                    f"str or os.PathLike)")
  pipeline = _pipeline(model, output_format, name)
  architecture = _architecture(model, architecture, name)
  if model.quantized_to:
    raise ValueError(f"{name}: the model is quantized ({model.quantized_to})"
                     "; a model directory holds float weights: save it "
                     "before quantize()")
  argument = f"{name}: directory"
  directory_writer.check_output_dir(directory, argument)
  labels = getattr(model, "labels", None) or huggingface.default_labels(
      architecture, getattr(model, "num_labels", 0))
  with tempfile.TemporaryDirectory() as scratch:
    vocab_file, do_lower_case = _vocabulary(model, vocab_file, scratch, name)
    vocabulary.check_vocab_fits(vocab_file, model.config.vocab_size,
                                f"{name}: the model's config")
    files = directory_writer.ModelFiles(
        config=model.config, architecture_name=architecture,
        tensors=_tensors(model, architecture), labels=labels,
        problem_type=getattr(model, "problem_type", None),
        vocabulary=rules.read_vocabulary(vocab_file),
        do_lower_case=do_lower_case,
        tokenizer_files=tokenizer_json.read_folder(scratch, model_file),
        score_activation=getattr(model, "score_activation", None))
    if pipeline is not None or files.score_activation is not None:
      # sentence-transformers tokenizes to tokenizer_config.json's length.
      files.model_max_length = getattr(getattr(model, "preprocessor", None),
                                       "max_seq_length", None)
    if pipeline is not None:
      files.folder = writer.transformer_folder(pipeline)
      files.tokenizer_folders = writer.tokenizer_folders(pipeline)
      files.extra_files = writer.folder_files(
          pipeline, model.config.hidden_size, _dense_weights(model),
          _static_weight(model))
      output_format = model_directory.HUGGINGFACE
    directory_writer.write_model_directory(directory, output_format, files,
                                           argument)


def _pipeline(model, output_format, name):
  """The sentence-transformers Pipeline to write (SENTENCE_TRANSFORMERS),
  else None; an embedder or a sparse encoder is refused any other format
  (its pooling would be lost)."""
  describe = getattr(model, "sentence_transformers_pipeline", None)
  pipeline = describe() if describe else None
  if output_format == SENTENCE_TRANSFORMERS:
    if pipeline is None:
      raise ValueError(f"{name}: format={output_format!r} is for embedders, "
                       f"sparse encoders and cross-encoders (BertEmbedder, "
                       f"BertSparseEncoder, BertClassifier)")
    return pipeline
  if pipeline is not None and \
      pipeline.model_type != sentence_transformers.CROSS_ENCODER:
    raise ValueError(
        f"{name}: format={output_format!r} would leave out its pooling; "
        f"save it as {SENTENCE_TRANSFORMERS!r} (or its encoder alone: "
        f"model.encoder.save_pretrained)")
  return None


def _dense_weights(model):
  """An embedder's Dense layers as {"kernel", "bias"} numpy arrays."""
  return [{variable.name: keras.ops.convert_to_numpy(variable)
           for variable in layer.weights}
          for layer in getattr(model, "dense_layers", ())]


def _static_weight(model):
  """A Router's query route weights (BertRoutedSparseEncoder's
  static_query) as a numpy array, else None."""
  layer = getattr(model, "static_query", None)
  return None if layer is None else keras.ops.convert_to_numpy(layer.weight)


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
  variables = model_weights.checkpoint_variables(model)
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
                      else VOCAB_FILE)
  shutil.copyfile(vocab_file, copy)
  return copy, vocabulary.vocab_is_lower_cased(copy)
