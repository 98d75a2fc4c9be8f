"""The files a training run reads and writes, checked before any work.

run_pretraining and the fine-tuning runner both read a bert_config.json
(checked against max_seq_length) and maybe an init checkpoint (a prefix or
a directory, as the original took it), and write checkpoints and results
into an output directory, none of which may overwrite an input.
"""

import logging
import os

from bert_tf.checkpoints import huggingface, tf_checkpoints
from bert_tf.config import BertConfig
from bert_tf.files import file_io, output_paths
from bert_tf.training.checkpoint_manager import (STATE_FILE, checkpoint_names,
                                                 is_run_checkpoint)

logger = logging.getLogger(__name__)


def load_bert_config(bert_config_file, max_seq_length):
  """The BertConfig, checked against --max_seq_length.

  Raises:
    ValueError: naming the flag or the file.
  """
  if max_seq_length < 2:
    raise ValueError(f"--max_seq_length={max_seq_length}: must be at least 2, "
                     f"room for [CLS] and [SEP]")
  file_io.check_input_file("--bert_config_file", bert_config_file)
  config = BertConfig.from_json_file(bert_config_file)
  if max_seq_length > config.max_position_embeddings:
    raise ValueError(
        f"Cannot use sequence length {max_seq_length} because the BERT model "
        f"was only trained up to sequence length "
        f"{config.max_position_embeddings} ({bert_config_file})")
  return config


def resolve_init_checkpoint(init_checkpoint):
  """--init_checkpoint as a checkpoint prefix (a directory gives its newest
  checkpoint, as the original's), or None when it is empty.

  Raises:
    ValueError: naming the flag, when there is no checkpoint there.
  """
  if not init_checkpoint:
    return None
  try:
    prefix = tf_checkpoints.resolve_checkpoint_path(init_checkpoint)
  except FileNotFoundError as error:
    raise ValueError(f"--init_checkpoint: {error}") from None
  if prefix != init_checkpoint:
    logger.info("--init_checkpoint=%s: using %s", init_checkpoint, prefix)
  return prefix


def check_model_to_use(do_train, init_checkpoint, output_dir, work):
  """Refuses to `work` (evaluate, predict) with a randomly initialised
  model: without training there must be --init_checkpoint or a checkpoint
  in --output_dir (the original's Estimator stopped with "Could not find
  trained model")."""
  if not do_train and not init_checkpoint and \
      not checkpoint_names(output_dir):
    raise ValueError(f"nothing to {work}: no checkpoint in "
                     f"--output_dir={output_dir} and no --init_checkpoint")


def checkpoint_inputs(init_checkpoint):
  """("--init_checkpoint", file) for each file of a checkpoint prefix or a
  Hugging Face folder (none for None): inputs no output may overwrite."""
  if not init_checkpoint:
    return []
  if huggingface.is_folder(init_checkpoint):
    return [("--init_checkpoint", path)
            for path in huggingface.folder_files(init_checkpoint)]
  return [("--init_checkpoint", path) for path in file_io.glob(
      f"{file_io.glob_escape(init_checkpoint)}.*")]


def check_run_outputs(output_dir, file_names, inputs, bert_config_file,
                      init_checkpoint=None, output_dirs=()):
  """output_paths.check_outputs for a training run.

  Args:
    output_dir: --output_dir.
    file_names: the files the run writes there; the checkpoint index is
      added.
    inputs: (flag, path) pairs the run reads; the config and the init
      checkpoint's files are added.
    bert_config_file, init_checkpoint: the run's (a prefix, or None).
    output_dirs: (flag, path) pairs of other directories written.
  """
  inputs = [*inputs, ("--bert_config_file", bert_config_file),
            *checkpoint_inputs(init_checkpoint)]
  output_paths.check_outputs(
      outputs=[("--output_dir", os.path.join(output_dir, name))
               for name in [*file_names, STATE_FILE]],
      inputs=inputs,
      output_dirs=[("--output_dir", output_dir), *output_dirs])
  _check_apart_from_init_checkpoint(output_dir, init_checkpoint)


def _check_apart_from_init_checkpoint(output_dir, init_checkpoint):
  """A run resumes from the checkpoints in its --output_dir as its own and
  writes its checkpoints, index and results there: in the directory of an
  init checkpoint that is not a run's (a release folder, whose `checkpoint`
  index lists bert_model.ckpt, or a Hugging Face folder) it would take that
  model for its own and mix its files with the model's. A run's own
  model.ckpt-<step> in its --output_dir is the original's way to predict
  with what it trained, and is taken."""
  if not init_checkpoint:
    return
  if huggingface.is_folder(init_checkpoint):
    model_dir = init_checkpoint
  elif is_run_checkpoint(init_checkpoint):
    return
  else:
    model_dir = os.path.dirname(init_checkpoint)
  if _same_directory(model_dir, output_dir):
    raise ValueError(
        f"--output_dir={output_dir} is the directory of the "
        f"--init_checkpoint, {init_checkpoint}: the run would resume from "
        f"the checkpoint there as its own and write its files among the "
        f"model's; choose another --output_dir (to go on from an earlier "
        f"run's checkpoints in --output_dir, leave out --init_checkpoint)")


def _same_directory(first, second):
  """Whether two paths name one directory (through links); False where one
  is missing."""
  if file_io.is_url(first) or file_io.is_url(second):
    return first.rstrip("/") == second.rstrip("/")
  try:
    return os.path.samefile(first or ".", second)
  except OSError:  # one is missing
    return False
