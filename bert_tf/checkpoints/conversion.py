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
import os
import re
import shutil
import stat

import ml_dtypes
import numpy as np

from bert_tf.checkpoints import (huggingface, huggingface_folder,
                                 pipeline_reader, sentence_transformers,
                                 sentence_transformers_saving)
from bert_tf.checkpoints.folder_vocabulary import VOCAB_FILE, vocabulary_in
from bert_tf.checkpoints.names import (GLOBAL_STEP, ORIGINAL_CONFIG_FILE,
                                      check_encoder_fits, expected_shape,
                                      labels_fields, labels_of_fields)
from bert_tf.config import BertConfig
from bert_tf.files import atomic_outputs, output_paths, storage
from bert_tf.files.json_files import read_json_object
from bert_tf.files.model_files import model_file, required_model_file
from bert_tf.wordpiece import learning, rules, tokenizer_json, vocabulary

logger = logging.getLogger(__name__)

ORIGINAL, HUGGINGFACE = "original", "huggingface"
FORMATS = (ORIGINAL, HUGGINGFACE)
# The dtypes a conversion may write every tensor in.
DTYPES = {"float32": np.float32, "float16": np.float16,
          "bfloat16": ml_dtypes.bfloat16}
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
    labels: the head's labels in row order, where it classifies (a Hugging
      Face folder's id2label; an original directory's bert_config.json
      id2label, see names.labels_fields).
    vocab_file: its vocab.txt, else its tokenizer.json (transformers 5
      writes no vocab.txt).
    do_lower_case: as the directory's tokenizer files say, or None.
    problem_type: the classifier's (names.PROBLEM_TYPES), or None.
    tokenizer_files: its tokenizer files, read once
      (tokenizer_json.FolderTokenizer: model_max_length, where the casing
      is said).
    pipeline: a sentence-transformers folder's modules and settings
      (sentence_transformers.Pipeline: an embedder, or a cross-encoder, as
      a Hub cross-encoder's config.json also makes it), else None.
    vocabulary: vocab_file read once (rules.Vocabulary), or None.
  """
  path: str
  format: str
  config: BertConfig
  reader: object
  architecture_name: str
  labels: list
  vocab_file: str
  do_lower_case: object
  problem_type: object = None
  tokenizer_files: object = None
  pipeline: object = None
  vocabulary: object = None

  @property
  def tokenization_rules(self):
    """The rules of the library that trained it (rules.TOKENIZATION_RULES):
    transformers' for a Hugging Face or sentence-transformers folder (a
    cross-encoder converted to the original format too), the original's
    for an original-format directory."""
    return rules.TRANSFORMERS_RULES if self.format == HUGGINGFACE or \
        self.pipeline is not None else rules.ORIGINAL_RULES


def detect_format(directory):
  """ORIGINAL or HUGGINGFACE, by the config file the directory holds."""
  if huggingface.is_folder(directory):
    return HUGGINGFACE
  if storage.exists(os.path.join(directory, ORIGINAL_CONFIG_FILE)):
    return ORIGINAL
  if not storage.isdir(directory):
    raise FileNotFoundError(f"{directory}: not a directory")
  raise ValueError(f"{directory}: neither a Hugging Face folder "
                   f"({huggingface.CONFIG_FILE}) nor an original-format one "
                   f"({ORIGINAL_CONFIG_FILE} beside its checkpoint)")


def open_checkpoint(directory, architecture_name=None, needs_vocab=True,
                    stored_dtypes=False, prefix=None):
  """Opens either format.

  Args:
    directory: the model directory.
    prefix: which of an original-format directory's checkpoints to open,
      resolved already (a run's --init_checkpoint); by default its newest
      (tf_checkpoints.resolve_checkpoint_path).
    needs_vocab: whether a directory without a vocabulary is refused (else
      its vocab_file is None: a run given --vocab_file).
    architecture_name: the head to take (a transformers class, see
      huggingface.ARCHITECTURES); the checkpoint must hold its tensors. By
      default the head its variables hold (huggingface.architecture_of; a
      one-output classifier is run_swag's unless a folder's config.json
      says BertForSequenceClassification or the directory names its
      labels), or a folder's class that bert_tf does not map
      (huggingface.check_mapped).
    stored_dtypes: the reader gives each tensor in its stored dtype, not
      float32 (see huggingface_folder.HuggingFaceFolder; an original
      checkpoint's reader always does).

  A sentence-transformers folder's BERT is its Transformer module's folder,
  its reader gives its Dense modules' weights too
  (pipeline_reader.PipelineReader), and its pipeline is read.
  """
  one_output = "BertForMultipleChoice"
  pipeline = None
  if sentence_transformers.is_folder(directory):
    pipeline = sentence_transformers.read_pipeline(directory)
    directory = pipeline.transformer_dir
  if detect_format(directory) == HUGGINGFACE:
    reader = huggingface_folder.HuggingFaceFolder(directory, stored_dtypes)
    config_file = os.path.join(directory, huggingface.CONFIG_FILE)
    pipeline = _with_activation(pipeline, directory,
                                reader.cross_encoder_activation)
    if pipeline is not None:
      reader = pipeline_reader.PipelineReader(
          reader, pipeline, reader.config.hidden_size)
    checkpoint = Checkpoint(directory, HUGGINGFACE, reader.config, reader,
                            None, reader.labels, None, None,
                            reader.problem_type, pipeline=pipeline)
    if reader.architecture_name == "BertForSequenceClassification":
      one_output = reader.architecture_name
    if reader.architecture_name not in huggingface.ARCHITECTURES:
      architecture_name = architecture_name or reader.architecture_name
  else:
    config_file = required_model_file(
        directory, ORIGINAL_CONFIG_FILE,
        "an original-format model directory has one")
    config = BertConfig.from_json_file(config_file)
    labels, problem_type = labels_of_fields(config.extra_fields, config_file)
    pipeline = _with_activation(
        pipeline, directory, sentence_transformers.cross_encoder_activation(
            config.extra_fields, config_file))
    # The pipeline holds it: a model of another head writes none.
    config.extra_fields.pop(sentence_transformers.ACTIVATION_FIELD, None)
    tf_checkpoints = _tf_checkpoints()
    prefix = prefix or tf_checkpoints.resolve_checkpoint_path(directory)
    checkpoint = Checkpoint(prefix, ORIGINAL, config,
                            tf_checkpoints.open_reader(prefix), None, labels,
                            None, None, problem_type, pipeline=pipeline)
    if labels or problem_type:
      one_output = "BertForSequenceClassification"
  shapes = checkpoint.reader.get_variable_to_shape_map()
  check_encoder_fits(checkpoint.config, shapes, checkpoint.path, config_file)
  checkpoint.architecture_name = architecture_name or \
      huggingface.architecture_of(shapes, checkpoint.path, one_output)
  if checkpoint.labels is None:
    checkpoint.labels = _unnamed_labels(checkpoint.architecture_name, shapes)
  tokenizer = tokenizer_json.read_folder(directory, model_file)
  checkpoint.tokenizer_files = tokenizer
  checkpoint.do_lower_case = tokenizer.do_lower_case
  checkpoint.vocabulary = vocabulary_in(directory, tokenizer, needs_vocab)
  if checkpoint.vocabulary is not None:
    checkpoint.vocab_file = checkpoint.vocabulary.path
    vocabulary.check_vocab_fits(checkpoint.vocabulary,
                                checkpoint.config.vocab_size, config_file)
  return checkpoint


def _with_activation(pipeline, directory, activation):
  """The folder's pipeline given the CrossEncoder activation its config
  .json (or bert_config.json) records, as sentence-transformers takes it:
  where config_sentence_transformers.json records none; a CrossEncoder's
  where the folder has no pipeline (the Hub's ms-marco layout)."""
  if pipeline is None:
    return activation and sentence_transformers.Pipeline(
        sentence_transformers.CROSS_ENCODER, directory,
        activation=activation)
  if pipeline.model_type == sentence_transformers.CROSS_ENCODER and \
      pipeline.activation is None:
    pipeline.activation = activation
  return pipeline


def _unnamed_labels(architecture_name, shapes):
  """The labels of a head whose directory names none: transformers'
  LABEL_i, a row each."""
  if architecture_name == "BertForTokenClassification":
    rows = shapes.get("cls/ner/output_weights", [0])[0]
  else:
    rows = shapes.get("output_weights", [2])[0]
  return huggingface.default_labels(architecture_name, rows)


def _tf_checkpoints():
  """tf_checkpoints, imported where an original checkpoint is read or
  written: TensorFlow comes with it, and no refusal before needs it."""
  from bert_tf.checkpoints import tf_checkpoints  # pylint: disable=g-import-not-at-top
  return tf_checkpoints


def _checkpoint_writer():
  """checkpoint_writer, imported where an original checkpoint is written
  (TensorFlow comes with it, as with _tf_checkpoints)."""
  from bert_tf.checkpoints import checkpoint_writer  # pylint: disable=g-import-not-at-top
  return checkpoint_writer


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


def convert(input_dir, output_dir, output_format, architecture_name=None,
            do_lower_case=None, dtype=None):
  """Converts the model in `input_dir` into `output_dir` in `output_format`.

  Args:
    input_dir: an original-format directory (bert_config.json, vocab.txt
      or a tokenizer.json, a checkpoint: released, a training run's or a
      community one's, whose optimizer slots and global_step are left out)
      or a Hugging Face folder.
    output_dir: a new or empty directory, or a symlink to one (the link
      stays; a dangling one's target is made).
    output_format: ORIGINAL or HUGGINGFACE.
    architecture_name: see open_checkpoint.
    do_lower_case: for tokenizer_config.json; None takes the input's, else
      what its vocabulary shows.
    dtype: one of DTYPES to write every tensor in; None keeps each one's.

  Returns:
    The Checkpoint read.
  """
  if output_format not in FORMATS:
    raise ValueError(f"--output_format={output_format}: expected one of "
                     f"{', '.join(FORMATS)}")
  if dtype is not None and dtype not in DTYPES:
    raise ValueError(f"--dtype={dtype}: expected one of {', '.join(DTYPES)}")
  check_output_dir(output_dir)
  source = open_checkpoint(input_dir, architecture_name, stored_dtypes=True)
  huggingface.check_mapped(source.architecture_name, source.path)
  architecture = huggingface.ARCHITECTURES[source.architecture_name]
  pipeline_files = _pipeline_files(source, input_dir, output_format)
  tensors = _checked_tensors(source, architecture, DTYPES.get(dtype),
                             output_format == ORIGINAL)
  if do_lower_case is None:
    do_lower_case = source.do_lower_case
  if do_lower_case is None:
    do_lower_case = vocabulary.vocab_is_lower_cased(source.vocab_file)
  files = ModelFiles(
      source.config, source.architecture_name, tensors, source.labels,
      source.problem_type, source.vocab_file, do_lower_case,
      source.pipeline.transformer_dir if source.pipeline else input_dir,
      score_activation=_score_activation(source))
  if pipeline_files is not None:
    files.model_max_length, files.extra_files = pipeline_files
  write_model_directory(output_dir, output_format, files)
  logger.info("Converted %s (%s, %s) into %s (%s)", input_dir, source.format,
              source.architecture_name, output_dir, output_format)
  return source


def _score_activation(source):
  """A CrossEncoder's activation (its default where its folder records
  none), else None."""
  pipeline = source.pipeline
  if pipeline is None or \
      pipeline.model_type != sentence_transformers.CROSS_ENCODER:
    return None
  return sentence_transformers.activation_or_default(pipeline.activation,
                                                     len(source.labels))


def _pipeline_files(source, input_dir, output_format):
  """(max length, {path: bytes} of its modules' files) that keep a
  sentence-transformers folder's modules and settings in a Hugging Face
  output (as save_pretrained writes them); None for another input or an
  original-format output, which has no place for an embedder's modules
  (refused, before any tensor is read)."""
  pipeline = source.pipeline
  if pipeline is None or not sentence_transformers.is_folder(input_dir):
    return None
  if output_format == ORIGINAL:
    if pipeline.model_type == sentence_transformers.EMBEDDER:
      modules = ["Pooling"] + ["Dense"] * len(pipeline.dense) + (
          ["Normalize"] if pipeline.normalize else [])
      raise ValueError(
          f"{input_dir}: a sentence-transformers embedder; an original-"
          f"format checkpoint has no place for its modules "
          f"({', '.join(modules)}), which would be lost: "
          f"--output_format={HUGGINGFACE} keeps them")
    return None
  pipeline = dataclasses.replace(pipeline,
                                activation=_score_activation(source))
  length = sentence_transformers.max_length_of(
      pipeline, source.tokenizer_files.model_max_length,
      source.config.max_position_embeddings)
  return length, sentence_transformers_saving.folder_files(
      pipeline, source.config.hidden_size,
      [pipeline_reader.dense_tensors(module) for module in pipeline.dense])


@dataclasses.dataclass
class ModelFiles:
  """What a model directory is written from, in either format.

  Attributes:
    tensors: {original name: array} of the architecture's tensors
      (huggingface.original_names), in the original layout; TensorFlow
      tensors too for an original-format output.
    labels, problem_type: the head's (see Checkpoint).
    vocab_file: vocab.txt, or a tokenizer.json.
    do_lower_case: the tokenizer's casing.
    tokenizer_dir: the directory whose tokenizer.json and
      tokenizer_config.json a Hugging Face output takes as they are, or
      None.
    model_max_length: tokenizer_config.json's (also over the one taken
      from tokenizer_dir), or None: the position table's.
    extra_files: {path inside the directory: bytes} written beside the
      model's files (a sentence-transformers folder's modules).
    score_activation: a CrossEncoder's activation (its config.json or
      bert_config.json records it: sentence_transformers
      .activation_fields), or None.
  """
  config: BertConfig
  architecture_name: str
  tensors: dict
  labels: list
  problem_type: object
  vocab_file: str
  do_lower_case: bool
  tokenizer_dir: object = None
  model_max_length: object = None
  extra_files: dict = dataclasses.field(default_factory=dict)
  score_activation: object = None


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
  if output_format == HUGGINGFACE:
    huggingface.write_folder_files(
        directory, files.config, files.architecture_name, files.tensors,
        files.do_lower_case, files.labels, files.problem_type,
        files.model_max_length, _activation_fields(files))
  else:
    _write_original(directory, files)
  _copy_tokenizer_files(files, directory, output_format)
  for name, data in files.extra_files.items():
    path = os.path.join(directory, name)
    storage.makedirs(os.path.dirname(path))
    with storage.open_file(path, "wb") as writer:
      writer.write(data)


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
  return sentence_transformers.activation_fields(files.score_activation)


def _copy_tokenizer_files(files, directory, output_format):
  """vocab.txt as the input has it, else written from its tokenizer.json
  for an original-format output. The tokenizer_dir's tokenizer.json and
  tokenizer_config.json go into a Hugging Face output as they are (over the
  tokenizer_config.json written for it), so do_lower_case must be theirs."""
  vocab_file, input_dir = files.vocab_file, files.tokenizer_dir
  if not tokenizer_json.is_tokenizer_json(vocab_file):
    shutil.copyfile(vocab_file, os.path.join(directory, VOCAB_FILE))
  elif output_format == ORIGINAL:
    learning.write_vocab(rules.load_vocab(vocab_file),
                           os.path.join(directory, VOCAB_FILE))
  if output_format == ORIGINAL or input_dir is None:
    return
  tokenizer_file = model_file(input_dir, tokenizer_json.TOKENIZER_FILE)
  if tokenizer_file is None:
    return
  vocabulary.check_casing(tokenizer_file, files.do_lower_case)
  for name in (tokenizer_json.TOKENIZER_FILE,
               tokenizer_json.TOKENIZER_CONFIG_FILE):
    path = model_file(input_dir, name)
    if path is None:
      continue
    if name == tokenizer_json.TOKENIZER_CONFIG_FILE and \
        files.model_max_length:
      values = read_json_object(path)
      values["model_max_length"] = files.model_max_length
      huggingface.write_json(os.path.join(directory, name), values)
    else:
      shutil.copyfile(path, os.path.join(directory, name))


def _checked_tensors(source, architecture, dtype, as_tensors):
  """{original name: array} of the architecture's tensors, each checked
  against the config and cast to `dtype` (None: kept), or TensorFlow
  tensors (as_tensors: what an original checkpoint is written from)."""
  as_tensor = _checkpoint_writer().as_tensor

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
  tf_checkpoints = _tf_checkpoints()
  tf_checkpoints.check_floats(source.reader, source.path, names)
  return tf_checkpoints.read_tensors(source.reader, source.path, names,
                                    convert)


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
