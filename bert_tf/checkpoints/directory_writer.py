"""Writing a model directory in either format (write_model_directory):
into a new directory, made whole beside it and renamed into place, or into
an existing empty one, in place, its config file last; every file with the
mode a new file takes."""

import dataclasses
import logging
import os
import re
import stat

import numpy as np

from bert_tf.checkpoints import huggingface, sentence_transformers
from bert_tf.checkpoints.folder_vocabulary import VOCAB_FILE
from bert_tf.checkpoints.model_directory import HUGGINGFACE, ORIGINAL
from bert_tf.checkpoints.names import (GLOBAL_STEP, ORIGINAL_CONFIG_FILE,
                                       labels_fields)
from bert_tf.checkpoints.sentence_transformers.activations import (
    activation_fields)
from bert_tf.config import BertConfig
from bert_tf.files import atomic_outputs, output_paths, storage
from bert_tf.files.input_checks import decode_utf8
from bert_tf.files.json_files import parse_json_object
from bert_tf.wordpiece import learning, rules, tokenizer_json, vocabulary

logger = logging.getLogger(__name__)

ORIGINAL_CHECKPOINT = "bert_model.ckpt"
# The temporary of a directory written in place, inside it:
# <directory>/model.tmp-<32 hex>/.
_IN_PLACE = "model"
# The files that make a directory a model directory, in the order they are
# renamed into an existing one after every other file: a directory a killed
# run left half written lacks at least its config, and opens as no model.
_MARKER_FILES = (sentence_transformers.MODULES_FILE,
                 sentence_transformers.MODEL_CONFIG_FILE,
                 huggingface.CONFIG_FILE, ORIGINAL_CONFIG_FILE)


@dataclasses.dataclass(kw_only=True)
class ModelFiles:
  """What a model directory is written from, in either format.

  Attributes:
    tensors: {original name: array} of the architecture's tensors
      (huggingface.original_names), in the original layout; TensorFlow
      tensors too for an original-format output.
    labels, problem_type: the head's (see model_directory.Checkpoint).
    vocabulary: vocab.txt, or a tokenizer.json, read once
      (rules.Vocabulary).
    do_lower_case: the tokenizer's casing.
    tokenizer_files: the input's tokenizer files, read once
      (tokenizer_json.FolderTokenizer), whose tokenizer.json and
      tokenizer_config.json a Hugging Face output takes as they are, or
      None.
    model_max_length: tokenizer_config.json's (also over the one taken
      from tokenizer_files), or None: the position table's.
    folder: the folder inside the directory that the model's own files
      (config, weights, tokenizer) go into; "" (the directory itself)
      unless a sentence-transformers Router holds the model in a route.
    tokenizer_folders: {folder inside the directory: model_max_length} of
      further folders of a Hugging Face output that take the tokenizer's
      files, each with its own max length (a Router's query route).
    extra_files: {path inside the directory: bytes} written beside the
      model's files (a sentence-transformers folder's modules).
    score_activation: a CrossEncoder's activation (its config.json or
      bert_config.json records it:
      sentence_transformers.activations.activation_fields), or None.
  """
  config: BertConfig
  architecture_name: str
  tensors: dict
  labels: list
  problem_type: object
  vocabulary: rules.Vocabulary
  do_lower_case: bool
  tokenizer_files: object = None
  model_max_length: object = None
  folder: str = ""
  tokenizer_folders: dict = dataclasses.field(default_factory=dict)
  extra_files: dict = dataclasses.field(default_factory=dict)
  score_activation: object = None


def check_output_dir(output_dir, name="--output_dir"):
  """Refuses anything but a new or empty directory, naming what is there,
  and paths that cannot become one (see output_paths.check_outputs), in
  one line naming the argument (`name`: a flag, or a Python argument). A
  symlink is written through: the directory it points to is the one that
  must be new or empty. The temporary a killed run left inside it is
  removed first."""
  output_paths.check_outputs(output_dirs=[(name, output_dir)])
  if storage.exists(output_dir):
    atomic_outputs.remove_stale_temporaries(storage.resolved(output_dir),
                                            re.escape(_IN_PLACE))
    _check_empty(output_dir, name)


def _check_empty(output_dir, name, ignored=None):
  """Raises ValueError where output_dir holds anything but `ignored`."""
  held = sorted(entry for entry in os.listdir(output_dir)
                if entry != ignored)
  if held:
    raise ValueError(
        f"{name}={output_dir} already holds {', '.join(held[:3])}"
        f"{' ...' if len(held) > 3 else ''}; a model directory is written "
        f"into a new or empty directory")


def write_model_directory(output_dir, output_format, files,
                          name="--output_dir"):
  """Writes `files` (a ModelFiles) as a model directory in output_format,
  into a new or empty output_dir only (see check_output_dir; `name` is
  the argument that gave it), every file with the mode a new file takes
  (_give_new_file_modes). What convert() and
  BertKerasModel.save_pretrained write.

  A new directory is written as a temporary beside it, renamed into place
  when complete: it appears whole or not at all. An existing (empty) one
  is written in place, so that it stays the directory it is (a working
  directory, a mount point, its owner and mode): the files are written
  into a temporary inside it, then each renamed into it, its config file
  last (_MARKER_FILES).
  """
  target = storage.resolved(output_dir)
  in_place = storage.isdir(target)
  storage.makedirs(os.path.dirname(target))
  with atomic_outputs.held_temporary(
      os.path.join(target, _IN_PLACE) if in_place else target,
      directory=True) as temporary:
    _write_files(temporary, output_format, files)
    _give_new_file_modes(temporary)
    if not in_place:
      check_output_dir(output_dir, name)
      os.rename(temporary, target)
      return
    _check_empty(output_dir, name, ignored=os.path.basename(temporary))
    for entry in sorted(os.listdir(temporary), key=_renamed_later):
      os.rename(os.path.join(temporary, entry), os.path.join(target, entry))


def _renamed_later(entry):
  """The order key of an entry renamed into an existing directory: its
  place in _MARKER_FILES, after every other file."""
  return _MARKER_FILES.index(entry) + 1 if entry in _MARKER_FILES else 0


def _write_files(directory, output_format, files):
  """Writes the model directory's files into `directory`."""
  model_dir = os.path.join(directory, files.folder)
  storage.makedirs(model_dir)
  if output_format == HUGGINGFACE:
    huggingface.write_folder_files(
        model_dir, files.config, files.architecture_name, files.tensors,
        files.do_lower_case, files.labels, files.problem_type,
        files.model_max_length, _activation_fields(files))
  else:
    _write_original(model_dir, files)
  _copy_tokenizer_files(files, model_dir, output_format)
  for folder, model_max_length in files.tokenizer_folders.items():
    _write_tokenizer(os.path.join(directory, folder), dataclasses.replace(
        files, model_max_length=model_max_length))
  for name, data in files.extra_files.items():
    path = os.path.join(directory, name)
    storage.makedirs(os.path.dirname(path))
    _write_bytes(path, data)


def _write_tokenizer(directory, files):
  """A Hugging Face folder's tokenizer files alone, into `directory`:
  tokenizer_config.json of files.model_max_length, and the files
  _copy_tokenizer_files writes."""
  storage.makedirs(directory)
  huggingface.write_tokenizer_config(directory, files.do_lower_case,
                                     files.model_max_length)
  _copy_tokenizer_files(files, directory, HUGGINGFACE)


def _write_original(directory, files):
  """bert_config.json (with a classifier's labels and problem_type, see
  names.labels_fields) and bert_model.ckpt (with global_step 0, as
  released)."""
  if files.config.hidden_act == "gelu_exact":
    logger.warning(
        "hidden_act is the exact (erf) GELU, which Hugging Face calls "
        "\"gelu\": bert_config.json says gelu_exact, which bert_tf computes; "
        "the original modeling.py knows only the tanh approximation (gelu)")
  config = files.config.with_extra_fields(_activation_fields(files))
  if files.architecture_name in huggingface.LABELLED_ARCHITECTURES:
    config = config.with_extra_fields(labels_fields(files.labels,
                                                    files.problem_type))
  config_file = os.path.join(directory, ORIGINAL_CONFIG_FILE)
  with storage.open_file(config_file, "w") as writer:
    writer.write(config.to_json_string())
  tensors = files.tensors
  tensors[GLOBAL_STEP] = np.array(0, np.int64)
  _checkpoint_writer().write_checkpoint(
      os.path.join(directory, ORIGINAL_CHECKPOINT), tensors)


def _give_new_file_modes(directory):
  """Gives every file in `directory` the mode a new file takes, 0666 less
  the umask (read from `directory`, made with 0777 less it): a writer that
  makes its own temporary (safetensors' save_file writes 0600) would
  otherwise keep the weights from the people the folder is shared with."""
  mode = stat.S_IMODE(os.stat(directory).st_mode) & 0o666
  for root, _, names in os.walk(directory):
    for name in names:
      os.chmod(os.path.join(root, name), mode)


def _activation_fields(files):
  """The config fields of a CrossEncoder's activation, where it is one."""
  if files.score_activation is None or \
      files.architecture_name != "BertForSequenceClassification":
    return {}
  return activation_fields(files.score_activation)


def _copy_tokenizer_files(files, directory, output_format):
  """vocab.txt as the input has it, else written from its tokenizer.json
  for an original-format output. The input's tokenizer.json and
  tokenizer_config.json go into a Hugging Face output as they are (over the
  tokenizer_config.json written for it), so do_lower_case must be theirs.
  Each is written from the bytes read when the input was opened."""
  vocab, tokenizer = files.vocabulary, files.tokenizer_files
  if not vocab.is_tokenizer_json:
    _write_bytes(os.path.join(directory, VOCAB_FILE), vocab.data)
  elif output_format == ORIGINAL:
    learning.write_vocab(vocab.vocab, os.path.join(directory, VOCAB_FILE))
  if output_format == ORIGINAL or tokenizer is None or \
      tokenizer.tokenizer_file is None:
    return
  vocabulary.check_casing(rules.tokenizer_json_vocabulary(
      tokenizer.tokenizer_file, tokenizer.tokenizer_data, tokenizer.settings),
                          files.do_lower_case)
  _write_bytes(os.path.join(directory, tokenizer_json.TOKENIZER_FILE),
               tokenizer.tokenizer_data)
  config_file = os.path.join(directory, tokenizer_json.TOKENIZER_CONFIG_FILE)
  if tokenizer.config_data is None:
    return
  if files.model_max_length:
    values = parse_json_object(decode_utf8(tokenizer.config_data,
                                           tokenizer.config_file),
                               tokenizer.config_file)
    values["model_max_length"] = files.model_max_length
    huggingface.write_json(config_file, values)
  else:
    _write_bytes(config_file, tokenizer.config_data)


def _write_bytes(path, data):
  with storage.open_file(path, "wb") as writer:
    writer.write(data)


def _checkpoint_writer():
  """checkpoint_writer, imported where an original checkpoint is written:
  TensorFlow comes with it, and no refusal before needs it."""
  from bert_tf.checkpoints.original import checkpoint_writer
  return checkpoint_writer
