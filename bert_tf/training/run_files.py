"""The files a training run writes, checked before any work.

run_pretraining and the fine-tuning runner write checkpoints and results
into an output directory, none of which may overwrite an input (the
model's files, which run_setup resolves, among them), in a directory that
is not the init checkpoint's model directory.
"""
import logging
import os

from bert_tf.checkpoints import huggingface
from bert_tf.files import atomic_outputs, output_paths, storage
from bert_tf.training.checkpoint_manager import (STATE_FILE, checkpoint_names,
                                                 is_run_checkpoint)

logger = logging.getLogger(__name__)


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
  return [("--init_checkpoint", path) for path in storage.glob(
      f"{storage.glob_escape(init_checkpoint)}.*")]


def check_run_outputs(output_dir, file_names, inputs, init_checkpoint=None,
                      output_dirs=(), model_files=None):
  """output_paths.check_outputs for a training run.

  Args:
    output_dir: --output_dir.
    file_names: the files the run writes there; the checkpoint index is
      added.
    inputs: (flag, path) pairs the run reads (run_setup.RunModel's among
      them).
    init_checkpoint: the run's (a prefix, a folder, or None).
    output_dirs: (flag, path) pairs of other directories written.
    model_files: {name: bytes} of the model files the run writes there
      (write_model_files), which must be new or the same.
  """
  _check_apart_from_init_checkpoint(output_dir, init_checkpoint)
  new_files = _files_to_write(output_dir, model_files or {})
  output_paths.check_outputs(
      outputs=[("--output_dir", path) for path in [
          *(os.path.join(output_dir, name)
            for name in [*file_names, STATE_FILE]), *new_files]],
      inputs=inputs,
      output_dirs=[("--output_dir", output_dir), *output_dirs])


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
  if storage.is_url(first) or storage.is_url(second):
    return first.rstrip("/") == second.rstrip("/")
  try:
    return os.path.samefile(first or ".", second)
  except OSError:  # one is missing
    return False


def _files_to_write(output_dir, files):
  """The model files a run writes into `output_dir`: those not there
  already with the same bytes (a resumed run's). Another model's are
  refused: the checkpoints beside them would not be theirs."""
  new = {}
  for name, content in files.items():
    path = os.path.join(output_dir, name)
    if storage.exists(path) and storage.kind_of_file(path) is None:
      with storage.open_file(path, "rb") as reader:
        if reader.read() == content:
          continue
      raise ValueError(
          f"--output_dir={output_dir} holds a {name} that is not this run's "
          f"model's; a run writes its model's {name} there, beside its "
          f"checkpoints: choose another --output_dir")
    new[os.path.join(output_dir, name)] = content
  return new


def write_model_files(output_dir, files):
  """Writes the model files (run_setup.model_files) that are not there
  yet, together."""
  new = _files_to_write(output_dir, files)
  if not new:
    return
  with atomic_outputs.AtomicFiles(list(new), "wb") as writers:
    for writer, content in zip(writers, new.values()):
      writer.write(content)
  logger.info("Wrote %s into %s: it is a model directory",
              ", ".join(os.path.basename(path) for path in new), output_dir)
