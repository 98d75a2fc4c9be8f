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

from bert_tf.checkpoints import huggingface
from bert_tf.checkpoints.folder_vocabulary import VOCAB_FILE
from bert_tf.checkpoints.huggingface.config import read_config
from bert_tf.checkpoints.model_directory import (ModelDirectory,
                                                 open_model_directory)
from bert_tf.checkpoints.names import ORIGINAL_CONFIG_FILE, check_encoder_fits
from bert_tf.config import BertConfig
from bert_tf.files import input_checks, storage
from bert_tf.wordpiece import rules, vocabulary

logger = logging.getLogger(__name__)

# Fields a run may set for itself over its model directory's: they shape
# training, not the model the weights make.
_TRAINING_FIELDS = ("hidden_dropout_prob", "attention_probs_dropout_prob",
                    "initializer_range")


@dataclasses.dataclass(frozen=True, kw_only=True)
class RunModel:
  """A run's model, resolved.

  Attributes:
    config: the BertConfig.
    config_file: the file it was read from (--bert_config_file, or the
      model directory's bert_config.json / config.json).
    init_checkpoint: the checkpoint prefix or Hugging Face folder to start
      from, or None (source.path).
    vocabulary: vocab.txt or a tokenizer.json, read once
      (rules.Vocabulary): the run's tokenizers, checks and output copy all
      take it; None where the run needs no vocabulary and none was given.
    do_lower_case: the casing the text is tokenized with.
    source: --init_checkpoint, opened once (a ModelDirectory, a bare TF1
      checkpoint's too), or None: the missing flags, a folder's pipeline
      and the weights the run starts from all come from it.
  """
  config: BertConfig
  config_file: str
  init_checkpoint: Optional[str]
  vocabulary: Optional[rules.Vocabulary]
  do_lower_case: bool
  source: Optional[ModelDirectory] = None

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
    if self.source is not None:
      inputs += [("--init_checkpoint", path)
                 for path in self.source.weight_files()]
    return inputs


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
  source = _open_init_checkpoint(init_checkpoint)
  config, config_file = _config(bert_config_file, source)
  if max_seq_length is not None:
    check_max_seq_length(max_seq_length, config, config_file)
  if source is not None and source.config is None:
    check_encoder_fits(config, source.reader.get_variable_to_shape_map(),
                       source.path, config_file)
  vocab = _vocabulary(vocab_file, source, needs_vocab)
  if vocab:
    vocabulary.check_vocab_fits(vocab, config.vocab_size, config_file)
  do_lower_case = _do_lower_case(do_lower_case, source, vocab)
  return RunModel(config=config, config_file=config_file,
                  init_checkpoint=source.path if source else None,
                  vocabulary=vocab, do_lower_case=do_lower_case,
                  source=source)


def check_max_seq_length(max_seq_length, config, config_file):
  """Raises ValueError where the model has no positions that far."""
  if max_seq_length > config.max_position_embeddings:
    raise ValueError(
        f"Cannot use sequence length {max_seq_length} because the BERT model "
        f"was only trained up to sequence length "
        f"{config.max_position_embeddings} ({config_file})")


def _open_init_checkpoint(init_checkpoint):
  """--init_checkpoint opened (open_model_directory: a model directory of
  any kind, a TF1 checkpoint prefix or a directory's newest, with or
  without a config beside it), or None where it is empty."""
  if not init_checkpoint:
    return None
  try:
    source = open_model_directory(init_checkpoint, needs_vocab=False,
                                  needs_config=False)
  except FileNotFoundError as error:
    raise ValueError(f"--init_checkpoint: {error}") from None
  if source.path != init_checkpoint:
    logger.info("--init_checkpoint=%s: using %s", init_checkpoint,
                source.path)
  return source


def _config(bert_config_file, source):
  """(BertConfig, its file): the flag's, which must make the model
  directory's model where there is one (it may set its own dropout), else
  the directory's."""
  folder_config = source.config if source is not None else None
  if bert_config_file:
    input_checks.check_input_file("--bert_config_file", bert_config_file)
    config = read_config(bert_config_file)
    differences = ", ".join(
        f"{field.name} {getattr(config, field.name)} against "
        f"{getattr(folder_config, field.name)}"
        for field in dataclasses.fields(config) if folder_config is not None
        and field.compare and field.name not in _TRAINING_FIELDS and
        getattr(config, field.name) != getattr(folder_config, field.name))
    if differences:
      raise ValueError(
          f"--bert_config_file={bert_config_file} is not the config of "
          f"--init_checkpoint's {source.config_file}: {differences}")
    return config, bert_config_file
  if folder_config is None:
    raise ValueError("--bert_config_file is required, unless "
                     "--init_checkpoint names a model directory (a release, "
                     "a Hugging Face folder, a run's --output_dir)")
  logger.info("bert_config: %s (from --init_checkpoint=%s)",
              source.config_file, source.directory)
  return folder_config, source.config_file


def _vocabulary(vocab_file, source, needs_vocab):
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
                folder_vocab.path, source.directory)
    return folder_vocab
  if needs_vocab:
    raise ValueError(
        "--vocab_file is required, unless --init_checkpoint names a model "
        "directory that holds its vocabulary (vocab.txt or tokenizer.json)"
        + (f"; {source.directory} has neither"
           if source is not None and source.config is not None else ""))
  return None


def _do_lower_case(do_lower_case, source, vocab):
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
    vocabulary.check_casing(vocab, do_lower_case,
                            source.path if source else None, tokenizer_files)
  elif tokenizer_files is not None:
    tokenizer_files.check_casing(do_lower_case)
  return do_lower_case


def model_files(run_model, labels_fields=None):
  """{name: bytes}: the files that make a run's --output_dir a model
  directory beside its checkpoints: bert_config.json (with the head's
  labels, `labels_fields`, as extra fields the original's BertConfig keeps
  as attributes) and the vocabulary: vocab.txt, or the tokenizer files of
  a folder that has no vocab.txt."""
  config = run_model.config.with_extra_fields(labels_fields or {})
  files = {ORIGINAL_CONFIG_FILE: config.to_json_string().encode("utf-8")}
  vocab = run_model.vocabulary
  if not vocab:
    return files
  if not vocab.is_tokenizer_json:
    files[VOCAB_FILE] = vocab.data
    return files
  files[os.path.basename(vocab.path)] = vocab.data
  tokenizer_config = os.path.join(os.path.dirname(vocab.path),
                                  huggingface.TOKENIZER_CONFIG_FILE)
  tokenizer_files = run_model.source and run_model.source.tokenizer_files
  if tokenizer_files and tokenizer_files.config_file == tokenizer_config:
    files[huggingface.TOKENIZER_CONFIG_FILE] = tokenizer_files.config_data
  elif storage.exists(tokenizer_config):  # beside a --vocab_file
    with storage.open_file(tokenizer_config, "rb") as reader:
      files[huggingface.TOKENIZER_CONFIG_FILE] = reader.read()
  return files
