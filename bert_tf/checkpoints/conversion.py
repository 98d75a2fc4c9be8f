"""Converting a BERT checkpoint directory between the original format and
Hugging Face's, either way (run_scripts/convert_checkpoint.py).

Weights move by name, as arrays, and no model is built: every tensor is read
(and checked) once, then written, so the weights are held once
(benchmarks/convert_checkpoint.py). The output goes into a new or empty
--output_dir only (write_model_directory). Each tensor keeps its dtype
(float16 and bfloat16 ones stay half the size) unless the dtype asked for
is another. A sentence-transformers folder keeps its modules and settings
in a Hugging Face output; an embedder's have no place in an original-format
one, which is refused.
"""

import dataclasses
import logging

import ml_dtypes
import numpy as np

from bert_tf.checkpoints import huggingface, sentence_transformers
from bert_tf.checkpoints.sentence_transformers.reader import dense_tensors
from bert_tf.checkpoints.sentence_transformers.writer import folder_files
from bert_tf.checkpoints.directory_writer import (ORIGINAL_CHECKPOINT,
                                                  ModelFiles,
                                                  check_output_dir,
                                                  write_model_directory)
from bert_tf.checkpoints.folder_vocabulary import VOCAB_FILE
from bert_tf.checkpoints.model_directory import (FORMATS, HUGGINGFACE,
                                                 ORIGINAL,
                                                 SENTENCE_TRANSFORMERS,
                                                 ModelDirectory,
                                                 open_model_directory)
from bert_tf.checkpoints.names import ORIGINAL_CONFIG_FILE, expected_shape
from bert_tf.checkpoints.sentence_transformers.activations import (
    activation_or_default)

# bert_tf.conversion's names: opening, converting and writing model
# directories, wherever they are defined.
__all__ = [
    "DTYPES", "FORMATS", "HUGGINGFACE", "ModelDirectory", "ModelFiles",
    "ORIGINAL", "ORIGINAL_CHECKPOINT", "ORIGINAL_CONFIG_FILE", "VOCAB_FILE",
    "check_output_dir", "convert", "open_model_directory",
    "write_model_directory"]

logger = logging.getLogger(__name__)

# The dtypes a conversion may write every tensor in.
DTYPES = {"float32": np.float32, "float16": np.float16,
          "bfloat16": ml_dtypes.bfloat16}


def convert(input_dir, output_dir, output_format, architecture_name=None,
            do_lower_case=None, dtype=None):
  """Converts the model in `input_dir` into `output_dir` in `output_format`.

  Args:
    input_dir: a model directory (a path, or a ModelDirectory opened
      already: its reader gives the dtypes it was opened with, so open it
      with stored_dtypes=True to keep float16 and bfloat16 tensors): an
      original-format directory (bert_config.json, vocab.txt
      or a tokenizer.json, a checkpoint: released, a training run's or a
      community one's, whose optimizer slots and global_step are left out)
      or a Hugging Face folder.
    output_dir: a new or empty directory, or a symlink to one (the link
      stays; a dangling one's target is made).
    output_format: ORIGINAL or HUGGINGFACE.
    architecture_name: see open_model_directory.
    do_lower_case: for tokenizer_config.json; None takes the input's, else
      what its vocabulary shows.
    dtype: one of DTYPES to write every tensor in; None keeps each one's.

  Returns:
    The ModelDirectory read.
  """
  if output_format not in FORMATS:
    raise ValueError(f"--output_format={output_format}: expected one of "
                     f"{', '.join(FORMATS)}")
  if dtype is not None and dtype not in DTYPES:
    raise ValueError(f"--dtype={dtype}: expected one of {', '.join(DTYPES)}")
  check_output_dir(output_dir)
  source = open_model_directory(input_dir,
                                architecture_name=architecture_name,
                                stored_dtypes=True)
  huggingface.check_mapped(source.architecture_name, source.path)
  architecture = huggingface.ARCHITECTURES[source.architecture_name]
  pipeline_files = _pipeline_files(source, output_format)
  tensors = _checked_tensors(source, architecture, DTYPES.get(dtype),
                             output_format == ORIGINAL)
  if do_lower_case is None:
    do_lower_case = source.casing()
  files = ModelFiles(
      config=source.config, architecture_name=source.architecture_name,
      tensors=tensors, labels=source.labels,
      problem_type=source.problem_type, vocabulary=source.vocabulary,
      do_lower_case=do_lower_case, tokenizer_files=source.tokenizer_files,
      score_activation=_score_activation(source))
  if pipeline_files is not None:
    files.model_max_length, files.extra_files = pipeline_files
  write_model_directory(output_dir, output_format, files)
  logger.info("Converted %s (%s, %s) into %s (%s)", source.directory,
              source.format,
              source.architecture_name, output_dir, output_format)
  return source


def _score_activation(source):
  """A CrossEncoder's activation (its default where its folder records
  none), else None."""
  pipeline = source.pipeline
  if pipeline is None or \
      pipeline.model_type != sentence_transformers.CROSS_ENCODER:
    return None
  return activation_or_default(pipeline.activation, len(source.labels))


def _pipeline_files(source, output_format):
  """(max length, {path: bytes} of its modules' files) that keep a
  sentence-transformers folder's modules and settings in a Hugging Face
  output (as save_pretrained writes them); None for another input or an
  original-format output, which has no place for an embedder's modules
  (refused, before any tensor is read)."""
  pipeline = source.pipeline
  if source.layout != SENTENCE_TRANSFORMERS:
    return None
  if output_format == ORIGINAL:
    if pipeline.model_type == sentence_transformers.EMBEDDER:
      modules = ["Pooling"] + ["Dense"] * len(pipeline.dense) + (
          ["Normalize"] if pipeline.normalize else [])
      raise ValueError(
          f"{source.directory}: a sentence-transformers embedder; an "
          f"original-format checkpoint has no place for its modules "
          f"({', '.join(modules)}), which would be lost: "
          f"--output_format={HUGGINGFACE} keeps them")
    return None
  pipeline = dataclasses.replace(pipeline,
                                activation=_score_activation(source))
  length = sentence_transformers.max_length_of(
      pipeline, source.tokenizer_files.model_max_length,
      source.config.max_position_embeddings)
  return length, folder_files(
      pipeline, source.config.hidden_size,
      [dense_tensors(module) for module in pipeline.dense])


def _checked_tensors(source, architecture, dtype, as_tensors):
  """{original name: array} of the architecture's tensors, each checked
  against the config and cast to `dtype` (None: kept), or TensorFlow
  tensors (as_tensors: what an original checkpoint is written from)."""
  # TensorFlow comes with these: imported once a checkpoint is read.
  # pylint: disable-next=g-import-not-at-top
  from bert_tf.checkpoints import model_weights
  # pylint: disable-next=g-import-not-at-top
  from bert_tf.checkpoints.original import checkpoint_writer
  as_tensor = checkpoint_writer.as_tensor

  def convert(value):
    if dtype is not None:
      value = value.astype(dtype, copy=False)
    return as_tensor(value) if as_tensors else value

  stored = source.reader.get_variable_to_shape_map()
  num_labels = huggingface.num_labels_of(source.architecture_name,
                                         source.labels)
  names = huggingface.original_names(source.config, architecture)
  for name in names:
    expected = expected_shape(source.config, name, num_labels)
    if name not in stored:
      raise ValueError(f"{source.path}: no variable {name}, which "
                       f"{source.architecture_name} has")
    if list(stored[name]) != expected:
      raise ValueError(f"{source.path}: variable {name} is shaped "
                       f"{list(stored[name])}, but its config makes it "
                       f"{expected}")
  model_weights.check_floats(source.reader, source.path, names)
  return model_weights.read_tensors(source.reader, source.path, names,
                                    convert)
