"""A model directory, opened once (open_model_directory): the one place
that asks what kind of directory a path is.

The kinds a user brings: a Google release or a community TF1 checkpoint
(bert_config.json beside it), a run's --output_dir (the same files), a bare
TF1 checkpoint whose config a run's flags give, a Hugging Face folder
(transformers 4 or 5 layout), and a sentence-transformers embedder or
cross-encoder (either layout; the Hub's ms-marco cross-encoders are Hugging
Face folders whose config.json records the activation). Each format's
package reads its own files (original/, huggingface/,
sentence_transformers/) and none imports another; this module puts them
together, each file read once, and checks them against each other once.
"""

import dataclasses
import os
from typing import Optional

from bert_tf.checkpoints import huggingface, sentence_transformers
from bert_tf.checkpoints.folder_vocabulary import vocabulary_in
from bert_tf.checkpoints.huggingface.reader import HuggingFaceFolder
from bert_tf.checkpoints.names import (ORIGINAL_CONFIG_FILE,
                                       check_encoder_fits, labels_of_fields)
from bert_tf.checkpoints.sentence_transformers.activations import (
    ACTIVATION_FIELD, cross_encoder_activation)
from bert_tf.checkpoints.sentence_transformers.reader import PipelineReader
from bert_tf.config import BertConfig
from bert_tf.files import storage
from bert_tf.files.model_files import model_file
from bert_tf.wordpiece import rules, tokenizer_json, vocabulary

ORIGINAL, HUGGINGFACE = "original", "huggingface"
FORMATS = (ORIGINAL, HUGGINGFACE)
# The layout of a sentence-transformers folder (modules.json or
# config_sentence_transformers.json), whose weights are in either format.
SENTENCE_TRANSFORMERS = "sentence-transformers"
# The max length text is tokenized to where nothing in the directory sets
# a shorter one, as run_classifier's default --max_seq_length.
DEFAULT_MAX_SEQ_LENGTH = 128


@dataclasses.dataclass(frozen=True, kw_only=True)
class ModelDirectory:
  """A model directory, opened: everything a model, a run, a conversion or
  extract_features takes from it, and where each came from.

  Attributes:
    directory: the directory opened (a sentence-transformers folder's root,
      the directory of a TF1 checkpoint).
    path: where its weights are: the TF1 checkpoint prefix, or the Hugging
      Face folder (a sentence-transformers folder's Transformer module).
    format: its weights' format, ORIGINAL or HUGGINGFACE.
    layout: the directory's: its weights' format, or SENTENCE_TRANSFORMERS
      for a sentence-transformers folder.
    config: its BertConfig; None for a bare TF1 checkpoint (no
      bert_config.json beside it: a run's flags give one).
    config_file: the file config was read from, or None.
    reader: its tensors by original name (get_variable_to_shape_map,
      get_variable_to_dtype_map, get_tensor): tf.train.load_checkpoint's,
      a HuggingFaceFolder, or a PipelineReader with a sentence embedder's
      Dense modules too.
    architecture_name: the transformers class of its head
      (huggingface.ARCHITECTURES, or one bert_tf does not map).
    labels: the head's labels in row order (transformers' LABEL_i where the
      directory names none).
    named_labels: the labels the directory itself names for its head's
      rows (config.json's id2label, bert_config.json's label fields), or
      None: what a model of other labels takes its rows by (head_rows).
    problem_type: the classifier's (names.PROBLEM_TYPES), or None.
    vocabulary: vocab.txt, else tokenizer.json, read once
      (rules.Vocabulary), or None.
    tokenizer_files: its tokenizer files, read once
      (tokenizer_json.FolderTokenizer), or None for a bare checkpoint.
    pipeline: a sentence-transformers embedder's or cross-encoder's
      modules and settings (sentence_transformers.Pipeline), or None.
  """
  directory: str
  path: str
  format: str
  layout: str
  config: Optional[BertConfig]
  config_file: Optional[str]
  reader: object
  architecture_name: str
  labels: list
  named_labels: Optional[list] = None
  problem_type: Optional[str] = None
  vocabulary: Optional[rules.Vocabulary] = None
  tokenizer_files: Optional[tokenizer_json.FolderTokenizer] = None
  pipeline: Optional[sentence_transformers.Pipeline] = None

  @property
  def vocab_file(self):
    """The vocabulary's file (vocab.txt or tokenizer.json), or None."""
    return self.vocabulary.path if self.vocabulary is not None else None

  @property
  def do_lower_case(self):
    """The casing its tokenizer files say, else None."""
    if self.tokenizer_files is None:
      return None
    return self.tokenizer_files.do_lower_case

  @property
  def model_max_length(self):
    """tokenizer_config.json's model_max_length, or None where unset."""
    if self.tokenizer_files is None:
      return None
    return self.tokenizer_files.model_max_length

  def casing(self):
    """The casing its tokenizer files say, else what its vocabulary shows
    (vocabulary.vocab_is_lower_cased)."""
    if self.do_lower_case is not None:
      return self.do_lower_case
    return vocabulary.vocab_is_lower_cased(self.vocabulary)

  @property
  def tokenization_rules(self):
    """The rules of the library that trained it (rules.TOKENIZATION_RULES):
    transformers' for a Hugging Face or sentence-transformers folder (a
    cross-encoder converted to the original format too), the original's
    for an original-format directory."""
    return rules.TRANSFORMERS_RULES if self.format == HUGGINGFACE or \
        self.pipeline is not None else rules.ORIGINAL_RULES

  def max_seq_length(self):
    """The length its text is tokenized to by default: a sentence-
    transformers folder's as sentence-transformers chooses it
    (sentence_transformers.max_length_of), else 128 or the tokenizer's
    model_max_length or the position table where that is less."""
    positions = self.config.max_position_embeddings
    if self.pipeline is not None:
      return sentence_transformers.max_length_of(
          self.pipeline, self.model_max_length, positions)
    return default_max_seq_length(self.model_max_length, positions)

  def weight_files(self):
    """The files its weights are read from, which no output may
    overwrite: a folder's config, weights and tokenizer files, or a TF1
    checkpoint's files."""
    if self.format == HUGGINGFACE:
      return huggingface.folder_files(self.path)
    return storage.glob(f"{storage.glob_escape(self.path)}.*")


def default_max_seq_length(model_max_length, max_position_embeddings,
                           preferred=DEFAULT_MAX_SEQ_LENGTH):
  """`preferred` (128; a task's own, such as run_squad's 384), or a
  tokenizer's model_max_length (None: unset) or the position table where
  that is less."""
  return min(preferred, model_max_length or preferred,
             max_position_embeddings)


def model_files_in(directory):
  """[(file name, what it is)] of the files in `directory` that make it a
  Hugging Face or sentence-transformers folder: a directory a run writes
  its own model into must have none (it would open as that model)."""
  return [(name, what) for name, what in (
      (huggingface.CONFIG_FILE, "a Hugging Face folder's config"),
      (sentence_transformers.MODULES_FILE,
       "a sentence-transformers folder's modules"),
      (sentence_transformers.MODEL_CONFIG_FILE,
       "a sentence-transformers folder's config"))
          if storage.exists(os.path.join(directory, name))]


def open_model_directory(location, *, architecture_name=None,
                         needs_vocab=True, needs_config=True,
                         stored_dtypes=False):
  """Opens a model directory of any kind: a ModelDirectory.

  Args:
    location: the directory; without needs_config, a TF1 checkpoint prefix
      too (a run's --init_checkpoint). A ModelDirectory is returned as it
      is: what takes a directory takes one opened already.
    architecture_name: the head to take (a transformers class, see
      huggingface.ARCHITECTURES); the checkpoint must hold its tensors. By
      default the head its variables hold (huggingface.architecture_of; a
      one-output classifier is run_swag's unless a folder's config.json
      says BertForSequenceClassification or the directory names its
      labels), or a folder's class that bert_tf does not map
      (huggingface.check_mapped).
    needs_vocab: whether a directory without a vocabulary is refused (else
      its vocabulary is None: a run given --vocab_file).
    needs_config: whether a TF1 checkpoint without a bert_config.json
      beside it is refused (else its config is None: a run given
      --bert_config_file).
    stored_dtypes: the reader gives each tensor in its stored dtype, not
      float32 (a conversion keeps float16 and bfloat16; an original
      checkpoint's reader always does).

  Raises:
    FileNotFoundError: nothing there, or no checkpoint.
    ValueError: one line naming the file and field: a directory of no
      kind bert_tf reads, files that disagree with each other.
  """
  if isinstance(location, ModelDirectory):
    return location
  pipeline = None
  weights_dir = location
  if sentence_transformers.is_folder(location):
    pipeline = sentence_transformers.read_pipeline(location)
    weights_dir = pipeline.transformer_dir
  if huggingface.is_folder(weights_dir):
    opened = _huggingface(location, weights_dir, pipeline, stored_dtypes)
  else:
    opened = _original(weights_dir, pipeline, needs_config)
  opened["layout"] = opened["format"]
  if pipeline is not None:
    opened.update(directory=location, layout=SENTENCE_TRANSFORMERS)
  return _with_head_and_vocabulary(opened, architecture_name, needs_vocab)


def _huggingface(location, folder, pipeline, stored_dtypes):
  """{field: value} of a Hugging Face folder (a sentence-transformers
  folder's Transformer module)."""
  reader = HuggingFaceFolder(folder, stored_dtypes)
  config_file = os.path.join(folder, huggingface.CONFIG_FILE)
  pipeline = _with_activation(pipeline, folder, cross_encoder_activation(
      reader.config_values, config_file))
  if pipeline is not None:
    reader = PipelineReader(reader, pipeline, reader.config.hidden_size,
                            reader.config.vocab_size)
  one_output = "BertForMultipleChoice"
  if reader.architecture_name == "BertForSequenceClassification":
    one_output = reader.architecture_name
  return dict(
      directory=location, path=folder, format=HUGGINGFACE,
      config=reader.config, config_file=config_file, reader=reader,
      named_labels=reader.labels, problem_type=reader.problem_type,
      pipeline=pipeline, tokenizer_dir=folder, one_output=one_output,
      architecture_name=(reader.architecture_name
                         if reader.architecture_name not in
                         huggingface.ARCHITECTURES else None))


def _original(location, pipeline, needs_config):
  """{field: value} of a TF1 checkpoint: a directory's newest (or the
  prefix given), with the bert_config.json beside it, read before
  TensorFlow is imported (a bad config is refused without it)."""
  is_directory = storage.isdir(location)
  if needs_config and not is_directory:
    raise FileNotFoundError(f"{location}: not a directory")
  directory = location if is_directory else os.path.dirname(location)
  config_file = model_file(directory, ORIGINAL_CONFIG_FILE)
  if needs_config and config_file is None:
    raise ValueError(
        f"{location}: neither a Hugging Face folder "
        f"({huggingface.CONFIG_FILE}) nor an original-format one "
        f"({ORIGINAL_CONFIG_FILE} beside its checkpoint)")
  fields = dict(directory=directory, format=ORIGINAL, config=None,
                config_file=config_file, pipeline=pipeline,
                tokenizer_dir=None, one_output="BertForMultipleChoice",
                architecture_name=None, named_labels=None)
  if config_file is not None:
    config = BertConfig.from_json_file(config_file)
    labels, problem_type = labels_of_fields(config.extra_fields,
                                            config_file)
    fields["pipeline"] = _with_activation(
        pipeline, directory,
        cross_encoder_activation(config.extra_fields, config_file))
    # The pipeline holds it: a model of another head writes none.
    config.extra_fields.pop(ACTIVATION_FIELD, None)
    if labels or problem_type:
      fields["one_output"] = "BertForSequenceClassification"
    fields.update(config=config, named_labels=labels,
                  problem_type=problem_type, tokenizer_dir=directory)
  tf_checkpoints = _tf_checkpoints()
  prefix = tf_checkpoints.resolve_checkpoint_path(location)
  return {**fields, "path": prefix,
          "reader": tf_checkpoints.open_reader(prefix)}


def _with_head_and_vocabulary(fields, architecture_name, needs_vocab):
  """The ModelDirectory of _huggingface's or _original's fields: its head
  found in its tensors, checked against its config, and its tokenizer
  files and vocabulary read."""
  shapes = fields["reader"].get_variable_to_shape_map()
  config = fields["config"]
  if config is not None:
    check_encoder_fits(config, shapes, fields["path"], fields["config_file"])
  architecture_name = architecture_name or fields.pop(
      "architecture_name") or huggingface.architecture_of(
          shapes, fields["path"], fields["one_output"])
  fields.pop("architecture_name", None)
  fields.pop("one_output")
  labels = fields["named_labels"] or _unnamed_labels(architecture_name,
                                                     shapes)
  tokenizer_dir = fields.pop("tokenizer_dir")
  tokenizer = vocab = None
  if tokenizer_dir is not None:
    tokenizer = tokenizer_json.read_folder(tokenizer_dir, model_file)
    vocab = vocabulary_in(tokenizer_dir, tokenizer, needs_vocab)
    if vocab is not None:
      vocabulary.check_vocab_fits(vocab, config.vocab_size,
                                  fields["config_file"])
  pipeline = fields["pipeline"]
  if pipeline is not None and pipeline.static_query is not None:
    fields["pipeline"] = dataclasses.replace(
        pipeline, query_max_length=_static_query_max_length(
            pipeline.static_query.folder, tokenizer, vocab))
  return ModelDirectory(**fields, architecture_name=architecture_name,
                        labels=labels, tokenizer_files=tokenizer,
                        vocabulary=vocab)


def _with_activation(pipeline, directory, activation):
  """The folder's pipeline given the CrossEncoder activation its config
  .json (or bert_config.json) records, as sentence-transformers takes it:
  where config_sentence_transformers.json records none; a CrossEncoder's
  where the folder has no pipeline (the Hub's ms-marco layout)."""
  if pipeline is None:
    return activation and sentence_transformers.Pipeline(
        model_type=sentence_transformers.CROSS_ENCODER,
        transformer_dir=directory, activation=activation)
  if pipeline.model_type == sentence_transformers.CROSS_ENCODER and \
      pipeline.activation is None:
    return dataclasses.replace(pipeline, activation=activation)
  return pipeline


def _static_query_max_length(folder, tokenizer, vocab):
  """The max length of a Router's query route (its SparseStaticEmbedding
  tokenizer_config.json's model_max_length, None where unset), whose
  tokenizer files must give the document route's tokens: bert_tf
  tokenises both routes with one vocabulary."""
  query_tokenizer = tokenizer_json.read_folder(folder, model_file)
  query_vocab = vocabulary_in(folder, query_tokenizer, True)
  if vocab is None or query_vocab.vocab != vocab.vocab or \
      query_tokenizer.do_lower_case != tokenizer.do_lower_case or \
      query_tokenizer.settings != tokenizer.settings:
    raise ValueError(f"{folder}: its tokenizer differs from the document "
                     f"route's; bert_tf tokenises both routes with one")
  return query_tokenizer.model_max_length


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
  # pylint: disable-next=g-import-not-at-top
  from bert_tf.checkpoints.original import tf_checkpoints
  return tf_checkpoints
