"""Converting a BERT checkpoint directory between the original format and
Hugging Face's, either way (run_scripts/convert_checkpoint.py).

Weights move by name, as arrays, and no model is built: every tensor is read
(and checked) once, then written, so the weights are held once
(benchmarks/convert_checkpoint.py). The output is written into a temporary
directory and renamed into place when complete, into a new or empty
--output_dir only.
"""

import dataclasses
import logging
import os
import shutil

import tensorflow as tf

from bert_tf import vocabulary
from bert_tf.checkpoints import huggingface, tf_checkpoints
from bert_tf.checkpoints.names import check_encoder_fits, expected_shape
from bert_tf.config import BertConfig
from bert_tf.files import file_io, output_paths
from bert_tf.files.model_files import required_model_file

logger = logging.getLogger(__name__)

ORIGINAL, HUGGINGFACE = "original", "huggingface"
FORMATS = (ORIGINAL, HUGGINGFACE)
ORIGINAL_CONFIG_FILE = "bert_config.json"
ORIGINAL_CHECKPOINT = "bert_model.ckpt"
VOCAB_FILE = "vocab.txt"


@dataclasses.dataclass
class Checkpoint:
  """A model directory, opened: what a conversion reads.

  Attributes:
    path: the checkpoint prefix, or the Hugging Face folder.
    format: ORIGINAL or HUGGINGFACE.
    config: its BertConfig.
    reader: its tensors by original name (get_variable_to_shape_map,
      get_tensor).
    architecture_name: the transformers class of its head (see
      huggingface.ARCHITECTURES).
    labels: the head's labels in order, where it classifies.
    vocab_file: its vocab.txt.
    do_lower_case: as the directory says, or None.
  """
  path: str
  format: str
  config: BertConfig
  reader: object
  architecture_name: str
  labels: list
  vocab_file: str
  do_lower_case: object


def detect_format(directory):
  """ORIGINAL or HUGGINGFACE, by the config file the directory holds."""
  if huggingface.is_folder(directory):
    return HUGGINGFACE
  if file_io.exists(os.path.join(directory, ORIGINAL_CONFIG_FILE)):
    return ORIGINAL
  if not file_io.isdir(directory):
    raise FileNotFoundError(f"{directory}: not a directory")
  raise ValueError(f"{directory}: neither a Hugging Face folder "
                   f"({huggingface.CONFIG_FILE}) nor an original-format one "
                   f"({ORIGINAL_CONFIG_FILE} beside its checkpoint)")


def open_checkpoint(directory, architecture_name=None):
  """Opens either format.

  Args:
    directory: the model directory.
    architecture_name: the head to take (a transformers class, see
      huggingface.ARCHITECTURES); the checkpoint must hold its tensors. By
      default the head its variables hold (huggingface.architecture_of; a
      one-output classifier is run_swag's unless a folder's config.json
      says BertForSequenceClassification).
  """
  one_output = "BertForMultipleChoice"
  if detect_format(directory) == HUGGINGFACE:
    reader = huggingface.HuggingFaceFolder(directory)
    config_file = os.path.join(directory, huggingface.CONFIG_FILE)
    checkpoint = Checkpoint(directory, HUGGINGFACE, reader.config, reader,
                            None, reader.labels, None, reader.do_lower_case)
    if reader.architecture_name == "BertForSequenceClassification":
      one_output = reader.architecture_name
  else:
    config_file = required_model_file(
        directory, ORIGINAL_CONFIG_FILE,
        "an original-format model directory has one")
    prefix = tf_checkpoints.resolve_checkpoint_path(directory)
    checkpoint = Checkpoint(prefix, ORIGINAL,
                            BertConfig.from_json_file(config_file),
                            tf_checkpoints.open_reader(prefix), None, None,
                            None, None)
  shapes = checkpoint.reader.get_variable_to_shape_map()
  check_encoder_fits(checkpoint.config, shapes, checkpoint.path, config_file)
  checkpoint.architecture_name = architecture_name or \
      huggingface.architecture_of(shapes, checkpoint.path, one_output)
  if checkpoint.labels is None:
    checkpoint.labels = huggingface.default_labels(
        checkpoint.architecture_name, shapes.get("output_weights", [2])[0])
  checkpoint.vocab_file = required_model_file(
      directory, VOCAB_FILE, f"a BERT model directory has its {VOCAB_FILE}")
  vocabulary.check_vocab_fits(checkpoint.vocab_file,
                              checkpoint.config.vocab_size, config_file)
  return checkpoint


def check_output_dir(output_dir):
  """Refuses anything but a new or empty directory, naming what is there,
  and paths that cannot become one (see output_paths.check_outputs). A
  symlink is written through: the directory it points to is the one that
  must be new or empty."""
  output_paths.check_outputs(output_dirs=[("--output_dir", output_dir)])
  if not file_io.exists(output_dir):
    return
  held = sorted(os.listdir(output_dir))
  if held:
    raise ValueError(
        f"--output_dir={output_dir} already holds {', '.join(held[:3])}"
        f"{' ...' if len(held) > 3 else ''}; a converted checkpoint goes "
        f"into a new or empty directory")


def convert(input_dir, output_dir, output_format, architecture_name=None,
            do_lower_case=None):
  """Converts the model in `input_dir` into `output_dir` in `output_format`.

  Args:
    input_dir: an original-format directory (bert_config.json, vocab.txt, a
      checkpoint: released, a training run's or a community one's, whose
      optimizer slots and global_step are left out) or a Hugging Face folder.
    output_dir: a new or empty directory, or a symlink to one (the link
      stays; a dangling one's target is made).
    output_format: ORIGINAL or HUGGINGFACE.
    architecture_name: see open_checkpoint.
    do_lower_case: for tokenizer_config.json; None takes the input's, else
      what its vocabulary shows.

  Returns:
    The Checkpoint read.
  """
  if output_format not in FORMATS:
    raise ValueError(f"--output_format={output_format}: expected one of "
                     f"{', '.join(FORMATS)}")
  check_output_dir(output_dir)
  source = open_checkpoint(input_dir, architecture_name)
  architecture = huggingface.ARCHITECTURES[source.architecture_name]
  # An original checkpoint is written from TensorFlow tensors: each array
  # becomes one as it is read, by tf.identity, whose result owns one buffer
  # (a tensor converted from numpy holds two: BERT-Large then peaks at 3.4 GB
  # instead of 2.2, benchmarks/convert_checkpoint.py).
  tensors = _checked_tensors(
      source, architecture, tf.identity if output_format == ORIGINAL else None)
  if do_lower_case is None:
    do_lower_case = source.do_lower_case
  if do_lower_case is None:
    do_lower_case = vocabulary.vocab_is_lower_cased(source.vocab_file)
  target = file_io.resolved(output_dir)
  file_io.makedirs(os.path.dirname(target))
  with file_io.held_temporary(target, directory=True) as temporary:
    if output_format == HUGGINGFACE:
      huggingface.write_folder_files(
          temporary, source.config, source.architecture_name, tensors,
          do_lower_case, source.labels)
    else:
      _write_original(temporary, source, tensors)
    shutil.copyfile(source.vocab_file, os.path.join(temporary, VOCAB_FILE))
    check_output_dir(output_dir)
    if file_io.exists(target):
      os.rmdir(target)
    os.rename(temporary, target)
  logger.info("Converted %s (%s, %s) into %s (%s)", input_dir, source.format,
              source.architecture_name, output_dir, output_format)
  return source


def _checked_tensors(source, architecture, convert=None):
  """{original name: array, or convert(array)} of the architecture's
  tensors, each checked against the config."""
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
  tf_checkpoints.check_floats(source.reader, source.path, names)
  return tf_checkpoints.read_tensors(source.reader, source.path, names, convert)


def _write_original(directory, source, tensors):
  """bert_config.json and bert_model.ckpt (with global_step 0, as released)."""
  if source.config.hidden_act == "gelu_exact":
    logger.warning(
        "hidden_act is the exact (erf) GELU, which Hugging Face calls "
        "\"gelu\": bert_config.json says gelu_exact, which bert_tf computes; "
        "the original modeling.py knows only the tanh approximation (gelu)")
  config_file = os.path.join(directory, ORIGINAL_CONFIG_FILE)
  with file_io.open_file(config_file, "w") as writer:
    writer.write(source.config.to_json_string())
  tensors[tf_checkpoints.GLOBAL_STEP] = tf.constant(0, tf.int64)
  tf_checkpoints.write_checkpoint(
      os.path.join(directory, ORIGINAL_CHECKPOINT), tensors)
