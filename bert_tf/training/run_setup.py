"""What a run's model is made of, resolved once before any work.

Every program that builds a BERT takes a config, an init checkpoint, a
vocabulary and a casing. The original needed all four flags; here
--init_checkpoint naming a model directory (a release, a community
checkpoint, a Hugging Face folder, a bert_tf output directory) is enough:
the others come from it, each logged with where it came from, and an
explicit flag that disagrees with the directory is refused naming both.
A fine-tuning or pretraining run then writes the same files into its
--output_dir (write_model_files), which makes it a model directory too.
"""

import dataclasses
import logging
import os
from typing import Optional

from bert_tf.checkpoints import (conversion, huggingface, huggingface_config,
                                 sentence_transformers, tf_checkpoints)
from bert_tf.wordpiece import rules, tokenizer_json, vocabulary
from bert_tf.config import BertConfig
from bert_tf.files import input_checks, storage
from bert_tf.training import run_files

logger = logging.getLogger(__name__)

VOCAB_FILE = conversion.VOCAB_FILE
CONFIG_FILE = conversion.ORIGINAL_CONFIG_FILE
TOKENIZER_FILE = tokenizer_json.TOKENIZER_FILE
# Fields a run may set for itself over its model directory's: they shape
# training, not the model the weights make.
_TRAINING_FIELDS = ("hidden_dropout_prob", "attention_probs_dropout_prob",
                    "initializer_range")


@dataclasses.dataclass(frozen=True)
class RunModel:
  """A run's model, resolved.

  Attributes:
    config: the BertConfig.
    config_file: the file it was read from (--bert_config_file, or the
      model directory's bert_config.json / config.json).
    init_checkpoint: the checkpoint prefix or Hugging Face folder to start
      from, or None.
    vocabulary: vocab.txt or a tokenizer.json, read once
      (rules.Vocabulary): the run's tokenizers, checks and output copy all
      take it; None where the run needs no vocabulary and none was given.
    do_lower_case: the casing the text is tokenized with.
    model_dir: the model directory the missing flags came from, or None.
    source: that directory, opened (conversion.Checkpoint), or None: what
      else the run takes from it (a folder's pipeline, its weights) comes
      from here, without opening it again.
  """
  config: BertConfig
  config_file: str
  init_checkpoint: Optional[str]
  vocabulary: Optional[rules.Vocabulary]
  do_lower_case: bool
  model_dir: Optional[str] = None
  source: Optional[conversion.Checkpoint] = None

  @property
  def vocab_file(self):
    """The vocabulary's path, or None."""
    return self.vocabulary.path if self.vocabulary else None

  def input_files(self):
    """(flag, path) of the files the run reads, which no output may
    overwrite."""
    inputs = [("--bert_config_file", self.config_file)]
    if self.vocab_file:
      inputs.append(("--vocab_file", self.vocab_file))
    return inputs + run_files.checkpoint_inputs(self.init_checkpoint)


def resolve_run_model(init_checkpoint, bert_config_file, vocab_file,
                      do_lower_case, max_seq_length, needs_vocab=True):
  """The run's model from its flags.

  Args:
    init_checkpoint: --init_checkpoint: a prefix, a directory (its newest
      checkpoint, as the original's) or a Hugging Face folder; or None.
    bert_config_file, vocab_file: the flags, or None to take the model
      directory's.
    do_lower_case: the flag where it was given, None to take the model
      directory's casing (else the original's default, True).
    max_seq_length: the run's, checked against the config; None for a run
      that decides it from the model directory (check_max_seq_length).
    needs_vocab: whether the run tokenizes (run_pretraining does not).

  Raises:
    ValueError: naming the flag or file: a missing flag the directory does
      not supply, a flag that disagrees with the directory.
  """
  if max_seq_length is not None and max_seq_length < 2:
    raise ValueError(f"--max_seq_length={max_seq_length}: must be at least "
                     f"2, room for [CLS] and [SEP]")
  prefix = _resolve_init_checkpoint(init_checkpoint)
  model_dir = model_directory_of(init_checkpoint, prefix)
  source = None
  if model_dir:  # a folder's prefix is the folder: it keeps its weights
    folder = prefix == model_dir
    source = conversion.open_checkpoint(model_dir, needs_vocab=False,
                                        prefix=None if folder else prefix)
    prefix = source.path
  config, config_file = _config(bert_config_file, source, model_dir)
  if max_seq_length is not None:
    check_max_seq_length(max_seq_length, config, config_file)
  if source is None:
    tf_checkpoints.check_fits(config, prefix, config_file)
  vocab = _vocabulary(vocab_file, source, model_dir, needs_vocab)
  if vocab:
    vocabulary.check_vocab_fits(vocab, config.vocab_size, config_file)
  do_lower_case = _do_lower_case(do_lower_case, source, vocab, prefix)
  return RunModel(config, config_file, prefix, vocab, do_lower_case,
                  model_dir, source)


def check_max_seq_length(max_seq_length, config, config_file):
  """Raises ValueError where the model has no positions that far."""
  if max_seq_length > config.max_position_embeddings:
    raise ValueError(
        f"Cannot use sequence length {max_seq_length} because the BERT model "
        f"was only trained up to sequence length "
        f"{config.max_position_embeddings} ({config_file})")


def _resolve_init_checkpoint(init_checkpoint):
  """--init_checkpoint as a checkpoint prefix or Hugging Face folder, or
  None when it is empty."""
  if not init_checkpoint:
    return None
  if _is_folder(init_checkpoint):
    return init_checkpoint
  try:
    prefix = tf_checkpoints.resolve_checkpoint_path(init_checkpoint)
  except FileNotFoundError as error:
    raise ValueError(f"--init_checkpoint: {error}") from None
  if prefix != init_checkpoint:
    logger.info("--init_checkpoint=%s: using %s", init_checkpoint, prefix)
  return prefix


def _is_folder(path):
  """Whether `path` is a Hugging Face or sentence-transformers folder,
  which is opened as it is (conversion.open_checkpoint)."""
  return huggingface.is_folder(path) or sentence_transformers.is_folder(path)


def model_directory_of(init_checkpoint, prefix):
  """The model directory --init_checkpoint names or lies in (one with a
  config beside its checkpoint), or None."""
  if not init_checkpoint:
    return None
  if _is_folder(prefix):
    return prefix
  directory = init_checkpoint if storage.isdir(init_checkpoint) else \
      os.path.dirname(prefix)
  if storage.exists(os.path.join(directory, CONFIG_FILE)):
    return directory
  return None


def _config(bert_config_file, source, model_dir):
  """(BertConfig, its file): the flag's, which must make the model
  directory's model where there is one (it may set its own dropout), else
  the directory's."""
  if source is not None:
    folder_file = _config_file_of(source, model_dir)
  if bert_config_file:
    input_checks.check_input_file("--bert_config_file", bert_config_file)
    config = huggingface_config.read_config(bert_config_file)
    differences = ", ".join(
        f"{field.name} {getattr(config, field.name)} against "
        f"{getattr(source.config, field.name)}"
        for field in dataclasses.fields(config) if source is not None and
        field.compare and field.name not in _TRAINING_FIELDS and
        getattr(config, field.name) != getattr(source.config, field.name))
    if differences:
      raise ValueError(
          f"--bert_config_file={bert_config_file} is not the config of "
          f"--init_checkpoint's {folder_file}: {differences}")
    return config, bert_config_file
  if source is None:
    raise ValueError("--bert_config_file is required, unless "
                     "--init_checkpoint names a model directory (a release, "
                     "a Hugging Face folder, a run's --output_dir)")
  logger.info("bert_config: %s (from --init_checkpoint=%s)", folder_file,
              model_dir)
  return source.config, folder_file


def _vocabulary(vocab_file, source, model_dir, needs_vocab):
  """The flag's vocabulary, which must be the model directory's where it
  has one, else the directory's; read once (rules.Vocabulary), or None."""
  folder_vocab = source.vocabulary if source is not None else None
  if vocab_file:
    input_checks.check_input_file("--vocab_file", vocab_file)
    vocab = rules.read_vocabulary(vocab_file)
    if folder_vocab and vocab.vocab != folder_vocab.vocab:
      raise ValueError(
          f"--vocab_file={vocab_file} is not the vocabulary of "
          f"--init_checkpoint's {folder_vocab.path}: the model's token ids "
          f"would mean other words")
    return vocab
  if folder_vocab:
    logger.info("vocab_file: %s (from --init_checkpoint=%s)",
                folder_vocab.path, model_dir)
    return folder_vocab
  if needs_vocab:
    raise ValueError(
        "--vocab_file is required, unless --init_checkpoint names a model "
        "directory that holds its vocabulary (vocab.txt or tokenizer.json)"
        + (f"; {model_dir} has neither" if model_dir else ""))
  return None


def _do_lower_case(do_lower_case, source, vocab, prefix):
  """The flag's casing, else the model directory's (vocabulary
  .model_casing), else True (the original's default); checked once
  against all the run knows of its model (vocabulary.check_casing)."""
  tokenizer_files = source.tokenizer_files if source is not None else None
  if tokenizer_files is not None:
    do_lower_case, where = vocabulary.model_casing(tokenizer_files, vocab,
                                                   do_lower_case)
    if where is not None:
      logger.info("do_lower_case: %s (%s)", do_lower_case, where)
  elif do_lower_case is None:
    do_lower_case = True
  if vocab is not None:
    vocabulary.check_casing(vocab, do_lower_case, prefix, tokenizer_files)
  elif tokenizer_files is not None:
    tokenizer_files.check_casing(do_lower_case)
  return do_lower_case


def _config_file_of(source, model_dir):
  """The file an opened model directory's config was read from."""
  return os.path.join(model_dir, huggingface.CONFIG_FILE
                      if source.format == conversion.HUGGINGFACE
                      else CONFIG_FILE)


def model_files(run_model, labels_fields=None):
  """{name: bytes}: the files that make a run's --output_dir a model
  directory beside its checkpoints: bert_config.json (with the head's
  labels, `labels_fields`, as extra fields the original's BertConfig keeps
  as attributes) and the vocabulary: vocab.txt, or the tokenizer files of
  a folder that has no vocab.txt."""
  config = run_model.config.with_extra_fields(labels_fields or {})
  files = {CONFIG_FILE: config.to_json_string().encode("utf-8")}
  vocab = run_model.vocabulary
  if not vocab:
    return files
  if not vocab.is_tokenizer_json:
    files[VOCAB_FILE] = vocab.data
    return files
  files[os.path.basename(vocab.path)] = vocab.data
  tokenizer_config = os.path.join(os.path.dirname(vocab.path),
                                  huggingface.TOKENIZER_CONFIG_FILE)
  if storage.exists(tokenizer_config):
    with storage.open_file(tokenizer_config, "rb") as reader:
      files[huggingface.TOKENIZER_CONFIG_FILE] = reader.read()
  return files
