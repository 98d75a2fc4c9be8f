"""Helpers shared by the tests: paths, tiny configs, layer checks."""

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

import bert_tf

SUPPORT_DIR = os.path.dirname(os.path.abspath(__file__))
PROJECT_DIR = os.path.dirname(os.path.dirname(SUPPORT_DIR))
SHARED_DIR = os.path.join(os.path.dirname(PROJECT_DIR), "shared")
ORIGINAL_TINY = os.path.join(SHARED_DIR, "reference", "original_tiny")
ORIGINAL_TINY_TRAIN = os.path.join(SHARED_DIR, "reference",
                                   "original_tiny_train")


def tiny_config(**overrides):
  """hidden 32, 2 layers, vocab under 200: fast enough for every test."""
  values = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2,
                num_attention_heads=4, intermediate_size=37,
                max_position_embeddings=64, type_vocab_size=2)
  values.update(overrides)
  return bert_tf.BertConfig(**values)


@contextlib.contextmanager
def within_seconds(seconds, fifos=()):
  """Fails the block with TimeoutError after `seconds`, so that what hung
  (work that grows without bound, a FIFO opened) fails a test instead of
  stopping the suite. A reader blocked opening one of `fifos` in a
  library's own code (which holds the interpreter, so no signal handler or
  thread of this process runs) is let go by another process then, which
  opens the FIFO for writing: the reader reads nothing."""

  def stop(*_):
    raise TimeoutError(f"still running after {seconds} s")

  previous = signal.signal(signal.SIGALRM, stop)
  signal.alarm(seconds)
  writers = [subprocess.Popen([
      sys.executable, "-c", "import os, sys, time; time.sleep(float("
      "sys.argv[1])); os.close(os.open(sys.argv[2], os.O_WRONLY | "
      "os.O_NONBLOCK))", str(seconds), str(fifo)],
      stderr=subprocess.DEVNULL) for fifo in fifos]
  try:
    yield
  finally:
    for writer in writers:
      writer.kill()
      writer.wait()
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def random_inputs(config, batch_size=3, seq_length=16, num_predictions=4,
                  seed=0):
  """A pretraining input dict with padding in all but the first example."""
  rng = np.random.default_rng(seed)
  input_mask = np.ones((batch_size, seq_length), np.int32)
  for row in range(1, batch_size):
    input_mask[row, seq_length - 3 * row:] = 0
  return {
      "input_ids": rng.integers(0, config.vocab_size,
                                (batch_size, seq_length)).astype(np.int32)
                   * input_mask,
      "input_mask": input_mask,
      "segment_ids": (np.arange(seq_length)[None, :] >= seq_length // 2)
                     .astype(np.int32) * input_mask,
      "masked_lm_positions": rng.integers(
          1, seq_length - 3 * (batch_size - 1),
          (batch_size, num_predictions)).astype(np.int32),
  }


def token_columns(model, *columns):
  """Text columns as the tuple of feature dicts (numpy) the model's
  preprocessor gives them: a fit on them traces no tokenizer, which is
  most of a short fit's time on text."""
  return tuple({name: np.asarray(value) for name, value in
                model.preprocessor(np.array(column)).items()}
               for column in columns)


def run_script(script, flag_values, env=None, timeout=600):
  """Runs run_scripts/<script>.py with --name=value flags; never raises."""
  args = [f"--{name}={value}" for name, value in flag_values.items()]
  return subprocess.run(
      [sys.executable, os.path.join(PROJECT_DIR, "run_scripts", script),
       *args], capture_output=True, text=True, timeout=timeout, check=False,
      env=None if env is None else {**os.environ, **env})


def run_script_counting_opens(script, flag_values, path, timeout=600):
  """run_script, counting the process's opens of `path`
  (support/count_opens.py): (the completed process, the count)."""
  args = [f"--{name}={value}" for name, value in flag_values.items()]
  result = subprocess.run(
      [sys.executable, os.path.join(SUPPORT_DIR, "count_opens.py"),
       str(path), os.path.join(PROJECT_DIR, "run_scripts", script), *args],
      capture_output=True, text=True, timeout=timeout, check=False)
  last = result.stderr.strip().splitlines()[-1]
  assert last.startswith("opens: "), result.stderr[-3000:]
  return result, int(last.removeprefix("opens: "))


def run_script_cases(script, cases, timeout=600):
  """Runs run_scripts/<script> with each {flag: value} dict of `cases` in one
  process; returns [(exit status, error message)] in order."""
  args = [[f"--{name}={value}" for name, value in case.items()]
          for case in cases]
  result = subprocess.run(
      [sys.executable, os.path.join(SUPPORT_DIR, "run_cases.py"),
       os.path.join(PROJECT_DIR, "run_scripts", script)],
      input=json.dumps(args), capture_output=True, text=True,
      timeout=timeout, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  return [tuple(item) for item in json.loads(
      result.stdout.strip().splitlines()[-1])]


def assert_fails_in_one_line(result, script, expected):
  """An expected error: exit status 1, one line `<script>: ...` holding
  `expected` (a regular expression), no traceback."""
  code, message = result
  assert code == 1 and "\n" not in message.strip(), message[-3000:]
  assert message.startswith(f"{script.removesuffix('.py')}: "), message
  assert re.search(expected, message), message


# The flags every fine-tuning script takes (fine_tuning_flags.py and the
# training flags it adopts).
FINE_TUNING_FLAGS = (
    "vocab_file", "bert_config_file", "init_checkpoint", "do_lower_case",
    "max_seq_length", "do_train", "do_eval", "do_predict", "train_batch_size",
    "eval_batch_size", "predict_batch_size", "learning_rate",
    "num_train_epochs", "warmup_proportion", "output_dir", "export_dir",
    "save_checkpoints_steps", "iterations_per_loop", "use_tpu", "tpu_name",
    "tpu_zone", "gcp_project", "master", "num_tpu_cores",
    "distribution_strategy", "use_xla", "dtype")


def assert_help_lists(script, names):
  """run_scripts/<script> --helpfull lists every flag of `names`; returns
  the help text."""
  result = run_script(script, {"helpfull": "true"})
  for name in names:
    assert f"--{name}:" in result.stdout or \
        f"--[no]{name}:" in result.stdout, name
  return result.stdout


def assert_cases_fail_before_writing(script, flag_values, cases, tmp_path):
  """Runs each {expected error (a regular expression): flags} case of
  `cases` with flag_values and its own --output_dir; each fails in one line
  and leaves its output_dir unmade."""
  outcomes = run_script_cases(script, [
      {**flag_values, "output_dir": tmp_path / f"output{number}", **case}
      for number, case in enumerate(cases.values())])
  for number, (expected, outcome) in enumerate(zip(cases, outcomes)):
    assert_fails_in_one_line(outcome, script, expected)
    assert not (tmp_path / f"output{number}").exists()


def kill_after_checkpoint(script, flag_values, step, sent=signal.SIGKILL):
  """Starts run_scripts/<script> with flag_values and sends it `sent`
  (SIGKILL: kill -9; SIGINT: Ctrl-C) as soon as the `checkpoint` index in
  its --output_dir lists model.ckpt-<step> or a later one (the index is
  written after the checkpoint's files; on a busy machine this process may
  look only after older checkpoints have left the index); returns (exit
  status, stderr)."""
  state = os.path.join(flag_values["output_dir"], "checkpoint")

  def listed():
    if not os.path.exists(state):
      return False
    with open(state, encoding="utf-8") as reader:
      steps = re.findall(r'"model\.ckpt-(\d+)"', reader.read())
    return any(int(listed_step) >= step for listed_step in steps)

  command = [sys.executable, os.path.join(PROJECT_DIR, "run_scripts", script),
             *[f"--{name}={value}" for name, value in flag_values.items()]]
  with tempfile.TemporaryFile("w+") as stderr:
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                               stderr=stderr, text=True,
                               preexec_fn=_signals_as_in_a_shell)
    deadline = time.time() + 300
    while not listed():
      assert process.poll() is None and time.time() < deadline
      time.sleep(0.005)
    process.send_signal(sent)
    process.wait()
    stderr.seek(0)
    return process.returncode, stderr.read()


def _signals_as_in_a_shell():
  """In a child before it starts: the signal it will be sent, handled by
  default and unblocked, as a program started from a shell has it. A test
  worker's state is inherited otherwise, and its libraries may have left a
  signal ignored or blocked (a program started with SIGINT ignored keeps
  ignoring it, as nohup relies on)."""
  for signum in (signal.SIGINT, signal.SIGTERM):
    signal.signal(signum, signal.SIG_DFL)
  signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT, signal.SIGTERM])


def assert_checkpoints_close(ours, theirs, atol):
  """Same variable names, and every value within atol."""
  import tensorflow as tf
  ours = tf.train.load_checkpoint(ours)
  theirs = tf.train.load_checkpoint(theirs)
  names = sorted(theirs.get_variable_to_shape_map())
  assert sorted(ours.get_variable_to_shape_map()) == names
  for name in names:
    np.testing.assert_allclose(ours.get_tensor(name), theirs.get_tensor(name),
                               atol=atol, rtol=0, err_msg=name)


def assert_fit_reaches_the_runs_checkpoint(model, dataset, tmp_path, steps=3):
  """model.fit(dataset) for `steps` steps, saved with its optimizer's
  slots, is the run's <tmp_path>/output/model.ckpt-<steps> bit for bit:
  compile() then fit trains as the runner trained."""
  model.fit(dataset, epochs=1, steps_per_epoch=steps, verbose=0)
  ours = bert_tf.save_checkpoint(
      model, str(tmp_path / "keras" / f"model.ckpt-{steps}"),
      global_step=steps, optimizer=model.optimizer)
  assert_checkpoints_close(
      ours, str(tmp_path / "output" / f"model.ckpt-{steps}"), atol=0)


def save_listed_checkpoint(model, directory, step):
  """Saves model as <directory>/model.ckpt-<step>, listed in a `checkpoint`
  index, as a run of it would leave the directory."""
  bert_tf.save_checkpoint(model, os.path.join(directory,
                                              f"model.ckpt-{step}"))
  with open(os.path.join(directory, "checkpoint"), "w") as writer:
    writer.write(f'model_checkpoint_path: "model.ckpt-{step}"\n'
                 f'all_model_checkpoint_paths: "model.ckpt-{step}"\n')


def read_scalars(directory, tag):
  """{step: value} of a scalar written under `directory`, read as
  TensorBoard reads it (its event reader, the scalars plugin's tags)."""
  import tensorflow as tf
  from tensorboard.backend.event_processing import event_accumulator
  events = event_accumulator.EventAccumulator(
      directory, size_guidance={event_accumulator.TENSORS: 0})
  events.Reload()
  try:
    if tag not in events.PluginTagToContent("scalars"):
      return {}
  except KeyError:  # no scalar at all
    return {}
  return {event.step: float(tf.make_ndarray(event.tensor_proto))
          for event in events.Tensors(tag)}


def free_port():
  """A local TCP port nothing listens on (at the time of asking)."""
  with socket.socket() as probe:
    probe.bind(("127.0.0.1", 0))
    return probe.getsockname()[1]


def run_two_workers(script, flag_values):
  """Runs run_scripts/<script>.py as two MultiWorkerMirroredStrategy workers
  on this machine (TF_CONFIG on 127.0.0.1); returns their stderr logs after
  checking both exited 0."""
  cluster = {"worker": [f"127.0.0.1:{free_port()}" for _ in range(2)]}
  flag_values = {**flag_values,
                 "distribution_strategy": "multi_worker_mirrored"}
  command = [sys.executable, os.path.join(PROJECT_DIR, "run_scripts", script),
             *[f"--{name}={value}" for name, value in flag_values.items()]]
  workers = [subprocess.Popen(
      command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
      env={**os.environ, "TF_CONFIG": json.dumps(
          {"cluster": cluster, "task": {"type": "worker", "index": index}})})
      for index in range(2)]
  logs = [worker.communicate(timeout=300)[1] for worker in workers]
  for worker, log in zip(workers, logs):
    assert worker.returncode == 0, log
  return logs


def hold_in_another_process(directory):
  """A process holding `directory` as a run does, until killed."""
  holder = subprocess.Popen(
      [sys.executable, os.path.join(SUPPORT_DIR, "hold_directory.py"),
       str(directory)],
      stdout=subprocess.PIPE, text=True)
  assert holder.stdout.readline() == "held\n"
  return holder


def run_on_a_full_disk(script, flag_values, disk, files=None, free_kib=64):
  """Runs run_scripts/<script> with a 4 MiB tmpfs mounted at `disk` (an
  existing empty directory), holding `files` ({name in the disk: source
  path}) and filled but for free_kib; returns the CompletedProcess. Skips
  the test where this machine lets no process mount one."""
  probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True,
                         check=False) if shutil.which("unshare") else None
  if probe is None or probe.returncode:
    pytest.skip("no unshare --mount here to mount a small tmpfs")
  copies = "".join(f"{source}\t{name}\n" for name, source in
                   (files or {}).items())
  return subprocess.run(
      ["unshare", "-rm", "sh", os.path.join(SUPPORT_DIR, "on_a_small_disk.sh"),
       "4m", str(disk),
       copies, str(free_kib), sys.executable,
       os.path.join(PROJECT_DIR, "run_scripts", script),
       *[f"--{name}={value}" for name, value in flag_values.items()]],
      capture_output=True, text=True, timeout=600, check=False)

