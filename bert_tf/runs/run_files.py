"""The files a training run writes, checked before any work.

run_pretraining and the fine-tuning runner write checkpoints and results
into an output directory, none of which may overwrite an input (the
model's files, which run_setup resolves, among them), in a directory that
is not the init checkpoint's model directory nor holds another model. A
fine-tuning run records there the flags that make its checkpoints
(run_flags.json), so that a run resumed with others is named.
"""
import json
import logging
import os

from bert_tf.checkpoints.model_directory import ORIGINAL, model_files_in
from bert_tf.files import atomic_outputs, output_paths, storage
from bert_tf.files.input_checks import decode_utf8
from bert_tf.files.json_files import parse_json_object
from bert_tf.training.checkpoint_manager import (STATE_FILE, checkpoint_names,
                                                 is_run_checkpoint)

logger = logging.getLogger(__name__)

RUN_FLAGS_FILE = "run_flags.json"
# A run_flags.json holds a few flags; a bigger one is not a run's.
_MOST_RUN_FLAGS_BYTES = 1 << 16


def check_model_to_use(do_train, init_checkpoint, output_dir, work):
  """Refuses to `work` (evaluate, predict) with a randomly initialised
  model: without training there must be --init_checkpoint or a checkpoint
  in --output_dir (the original's Estimator stopped with "Could not find
  trained model")."""
  if not do_train and not init_checkpoint and \
      not checkpoint_names(output_dir):
    raise ValueError(f"nothing to {work}: no checkpoint in "
                     f"--output_dir={output_dir} and no --init_checkpoint")


def check_run_outputs(output_dir, file_names, inputs, source=None,
                      output_dirs=(), model_files=None, run_flags=None):
  """output_paths.check_outputs for a training run.

  Args:
    output_dir: --output_dir.
    file_names: the files the run writes there; the checkpoint index is
      added.
    inputs: (flag, path) pairs the run reads (run_setup.RunModel's among
      them).
    source: the run's --init_checkpoint, opened (a ModelDirectory), or
      None.
    output_dirs: (flag, path) pairs of other directories written.
    model_files: {name: bytes} of the model files the run writes there
      (write_model_files), which must be new or the same.
    run_flags: {flag: value} that make a training run's checkpoints, which
      must be those of the checkpoints it goes on from (_check_run_flags);
      None for a run that does not train.
  """
  directories = [("--output_dir", output_dir), *output_dirs]
  # What is in the directory is read only once it is one.
  output_paths.check_outputs(output_dirs=directories)
  _check_apart_from_init_checkpoint(output_dir, source)
  _check_holds_no_other_model(output_dir)
  if run_flags is not None:
    _check_run_flags(output_dir, run_flags)
  names = [*file_names, STATE_FILE]
  if run_flags is not None:
    names.append(RUN_FLAGS_FILE)
  paths = [os.path.join(output_dir, name) for name in names]
  paths += _files_to_write(output_dir, model_files or {})
  output_paths.check_outputs(
      outputs=[("--output_dir", path) for path in paths], inputs=inputs,
      output_dirs=directories)


def _check_apart_from_init_checkpoint(output_dir, source):
  """A run resumes from the checkpoints in its --output_dir as its own and
  writes its checkpoints, index and results there: in the directory of an
  init checkpoint that is not a run's (a release folder, whose `checkpoint`
  index lists bert_model.ckpt, or a Hugging Face folder) it would take that
  model for its own and mix its files with the model's. A run's own
  model.ckpt-<step> in its --output_dir is the original's way to predict
  with what it trained, and is taken."""
  if source is None or (source.format == ORIGINAL and
                        is_run_checkpoint(source.path)):
    return
  if _same_directory(source.directory, output_dir):
    raise ValueError(
        f"--output_dir={output_dir} is the directory of the "
        f"--init_checkpoint, {source.path}: the run would resume from "
        f"the checkpoint there as its own and write its files among the "
        f"model's; choose another --output_dir (to go on from an earlier "
        f"run's checkpoints in --output_dir, leave out --init_checkpoint)")


def _check_holds_no_other_model(output_dir):
  """A run's --output_dir becomes its model directory (its checkpoints
  beside its bert_config.json): one that holds another model (a Hugging
  Face or sentence-transformers folder, a checkpoint no run named) would
  open as that model, or mix the two."""
  for name, what in model_files_in(output_dir):
    raise ValueError(
        f"--output_dir={output_dir} holds {name}, {what}: the directory "
        f"would open as that model, not as this run's; choose another "
        f"--output_dir")
  for path in storage.glob(os.path.join(storage.glob_escape(output_dir),
                                        "*.index")):
    prefix = path[:-len(".index")]
    if not is_run_checkpoint(prefix) and storage.glob(
        f"{storage.glob_escape(prefix)}.data-*"):
      raise ValueError(
          f"--output_dir={output_dir} holds the checkpoint "
          f"{os.path.basename(prefix)}, which no run wrote (a run's are "
          f"model.ckpt-<step>): the run would take it for its own; choose "
          f"another --output_dir")


def _check_run_flags(output_dir, run_flags):
  """Refuses to go on training the checkpoints in output_dir with a model
  that other flags make (an adapter or a task of another run): run_flags
  ({flag: value}, "task" first) must be those its RUN_FLAGS_FILE records
  (write_run_flags). A directory without checkpoints, or without the file
  (a run of an earlier bert_tf), holds nothing to compare with."""
  path = os.path.join(output_dir, RUN_FLAGS_FILE)
  if not storage.exists(path) or not checkpoint_names(output_dir):
    return
  recorded = _read_run_flags(path)
  _check_recorded_types(recorded, run_flags, path)
  for name in {**run_flags, **recorded}:
    if recorded.get(name) != run_flags.get(name):
      raise ValueError(_other_flag(name, recorded.get(name),
                                   run_flags.get(name), path))


def _read_run_flags(path):
  """{flag: value} of a RUN_FLAGS_FILE, refused by name where it cannot be
  one (not a regular file, too big, not a JSON object)."""
  kind = storage.kind_of_file(path)
  if kind is not None:
    raise ValueError(f"{path} is {kind}, not the run's flags file")
  if storage.size(path) > _MOST_RUN_FLAGS_BYTES:
    raise ValueError(f"{path}: {storage.size(path)} bytes, more than a "
                     f"run's flags take ({_MOST_RUN_FLAGS_BYTES})")
  with storage.open_file(path, "rb") as reader:
    return parse_json_object(decode_utf8(reader.read(), path), path)


def _check_recorded_types(recorded, run_flags, path):
  """Refuses a RUN_FLAGS_FILE that no run wrote: one without a task's
  name, or with a value other than null, a string or a whole number (of
  the type of this run's own value, where it has one)."""
  if not isinstance(recorded.get("task"), str):
    raise ValueError(f"{path}: names no task (a string under \"task\")")
  for name, value in recorded.items():
    given = run_flags.get(name)
    types = (str, int) if given is None else (type(given),)
    if value is not None and type(value) not in types:
      raise ValueError(f"{path}: {name} is a {type(value).__name__}, not "
                       f"a value of --{name}")


def _other_flag(name, recorded, given, path):
  """The message for a flag whose value is not the one the checkpoints in
  --output_dir were trained with (RUN_FLAGS_FILE `path` records it)."""
  if name == "task":
    return (f"--output_dir holds the checkpoints of a {recorded} run (see "
            f"{path}), and this run is {given}'s; choose another "
            f"--output_dir")
  now = f"--{name} is not given" if given is None else f"--{name}={given}"
  then, fix = (f"without --{name}", "leave it out") if recorded is None \
      else (f"with --{name}={recorded}", f"pass --{name}={recorded}")
  return (f"{now}, but the checkpoints in --output_dir were trained {then} "
          f"(see {path}): {fix} to go on with them, or choose another "
          f"--output_dir")


def write_run_flags(output_dir, run_flags):
  """Records the flags that make a training run's checkpoints
  (_check_run_flags)."""
  path = os.path.join(output_dir, RUN_FLAGS_FILE)
  with atomic_outputs.atomic_write(path) as writer:
    writer.write(json.dumps(run_flags, indent=2) + "\n")


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
