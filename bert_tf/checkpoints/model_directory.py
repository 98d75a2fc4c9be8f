"""A model directory, opened, in either format (open_checkpoint): the
original's (bert_config.json beside a TF1 checkpoint) or Hugging Face's
(config.json, model.safetensors), a sentence-transformers folder's BERT
among them, with its config, tensors, head, vocabulary and casing, each
checked against the others once."""

import dataclasses
import os

from bert_tf.checkpoints import (huggingface, huggingface_folder,
                                 pipeline_reader, sentence_transformers)
from bert_tf.checkpoints.folder_vocabulary import vocabulary_in
from bert_tf.checkpoints.names import (ORIGINAL_CONFIG_FILE,
                                       check_encoder_fits, labels_of_fields)
from bert_tf.checkpoints.sentence_transformers_activations import (
    ACTIVATION_FIELD, cross_encoder_activation)
from bert_tf.config import BertConfig
from bert_tf.files import storage
from bert_tf.files.model_files import model_file, required_model_file
from bert_tf.wordpiece import rules, tokenizer_json, vocabulary

ORIGINAL, HUGGINGFACE = "original", "huggingface"
FORMATS = (ORIGINAL, HUGGINGFACE)


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
    pipeline = _with_activation(pipeline, directory, cross_encoder_activation(
        config.extra_fields, config_file))
    # The pipeline holds it: a model of another head writes none.
    config.extra_fields.pop(ACTIVATION_FIELD, None)
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
  """tf_checkpoints, imported where an original checkpoint is read:
  TensorFlow comes with it, and no refusal before needs it."""
  from bert_tf.checkpoints import (  # pylint: disable=g-import-not-at-top
      tf_checkpoints)
  return tf_checkpoints
