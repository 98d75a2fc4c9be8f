"""run_scripts/run_pretraining.py against the original's training trajectory."""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from bert_tf.data.pretraining_dataset import pretraining_dataset
from tests.helpers import (ORIGINAL_TINY, ORIGINAL_TINY_TRAIN, PROJECT_DIR,
                           assert_checkpoints_close, free_port, read_scalars,
                           run_script, run_two_workers)

ORIGINAL_FLAGS = {
    "input_file": os.path.join(ORIGINAL_TINY_TRAIN, "batch.tfrecord"),
    "bert_config_file": os.path.join(ORIGINAL_TINY_TRAIN, "bert_config.json"),
    "init_checkpoint": os.path.join(ORIGINAL_TINY, "bert_model.ckpt"),
    "max_seq_length": 16, "max_predictions_per_seq": 4,
    "train_batch_size": 3, "shuffle_buffer_size": 0, "learning_rate": 1e-3,
    "num_train_steps": 10, "num_warmup_steps": 2,
    "save_checkpoints_steps": 3, "iterations_per_loop": 1,
}


def pretrain(output_dir, env=None, **overrides):
  flag_values = {**ORIGINAL_FLAGS, "output_dir": output_dir, "do_train": True,
                 **overrides}
  return run_script("run_pretraining.py", flag_values, env=env)


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory):
  """The reference settings, then 2 eval batches of 3."""
  output_dir = str(tmp_path_factory.mktemp("pretraining"))
  result = pretrain(output_dir, do_eval=True, eval_batch_size=3,
                    max_eval_steps=2)
  assert result.returncode == 0, result.stderr
  return output_dir, result.stderr


@pytest.mark.shared
def test_losses_follow_the_original(reference_run):
  output_dir, _ = reference_run
  with open(os.path.join(ORIGINAL_TINY_TRAIN, "trajectory.json")) as reader:
    expected = json.load(reader)["losses_before_each_step"]
  losses = read_scalars(output_dir, "loss")
  assert sorted(losses) == list(range(1, 11))
  np.testing.assert_allclose([losses[step] for step in range(1, 11)],
                             expected, atol=1e-4, rtol=0)


@pytest.mark.shared
@pytest.mark.parametrize("step", [3, 10])
def test_checkpoints_equal_the_originals(reference_run, step):
  output_dir, _ = reference_run
  assert_checkpoints_close(
      os.path.join(output_dir, f"model.ckpt-{step}"),
      os.path.join(ORIGINAL_TINY_TRAIN, f"model.ckpt-{step}"), atol=1e-4)


@pytest.mark.shared
def test_checkpoints_every_save_steps_and_at_the_end(reference_run):
  output_dir, _ = reference_run
  assert tf.train.latest_checkpoint(output_dir).endswith("model.ckpt-10")
  state = tf.train.get_checkpoint_state(output_dir)
  assert [os.path.basename(path) for path in
          state.all_model_checkpoint_paths] == [
              "model.ckpt-3", "model.ckpt-6", "model.ckpt-9", "model.ckpt-10"]


@pytest.mark.shared
def test_eval_results_are_the_originals_metrics(reference_run):
  """Recomputed by hand from the run's model.ckpt-10."""
  output_dir, _ = reference_run
  with open(os.path.join(output_dir, "eval_results.txt")) as reader:
    written = dict(line.rstrip("\n").split(" = ") for line in reader)
  assert list(written) == ["global_step", "loss", "masked_lm_accuracy",
                           "masked_lm_loss", "next_sentence_accuracy",
                           "next_sentence_loss"]
  assert written["global_step"] == "10"

  model = bert_tf.BertPretrainer(bert_tf.BertConfig.from_json_file(
      ORIGINAL_FLAGS["bert_config_file"]))
  bert_tf.load_checkpoint(model, os.path.join(output_dir, "model.ckpt-10"))
  batch = next(iter(pretraining_dataset([ORIGINAL_FLAGS["input_file"]], 16, 4,
                                        3, is_training=False)))
  outputs = model(batch, training=False)
  log_probs = outputs["masked_lm_log_probs"].numpy()
  ids, weights = batch["masked_lm_ids"].numpy(), \
      batch["masked_lm_weights"].numpy()
  token_nll = -np.take_along_axis(log_probs, ids[..., None], -1)[..., 0]
  labels = batch["next_sentence_labels"].numpy().reshape(-1)
  nsp = outputs["next_sentence_log_probs"].numpy()
  masked_lm_loss = (weights * token_nll).sum() / weights.sum()
  next_sentence_loss = -nsp[np.arange(3), labels].mean()
  expected = {
      "masked_lm_accuracy": (weights * (log_probs.argmax(-1) == ids)).sum()
                            / weights.sum(),
      "masked_lm_loss": masked_lm_loss,
      "next_sentence_accuracy": (nsp.argmax(-1) == labels).mean(),
      "next_sentence_loss": next_sentence_loss,
      "loss": (weights * token_nll).sum() / (weights.sum() + 1e-5)
              + next_sentence_loss,
  }
  for key, value in expected.items():
    assert float(written[key]) == pytest.approx(value, abs=1e-5), key


@pytest.mark.shared
def test_summaries_and_progress(reference_run):
  output_dir, log = reference_run
  for tag in ("learning_rate", "masked_lm_accuracy", "next_sentence_accuracy",
              "examples_per_sec"):
    assert sorted(read_scalars(output_dir, tag)) == list(range(1, 11)), tag
  assert sorted(read_scalars(os.path.join(output_dir, "eval"),
                             "masked_lm_accuracy")) == [10]
  assert "step 10/10 loss " in log
  assert "examples/sec, ETA " in log


@pytest.mark.shared
def test_a_killed_run_resumes_where_it_stopped(tmp_path):
  """SIGKILL after the first checkpoint; the same command finishes the run
  with the weights an uninterrupted run ends with."""
  steps = dict(num_train_steps=600, save_checkpoints_steps=50,
               iterations_per_loop=10, num_warmup_steps=10)
  straight = pretrain(str(tmp_path / "straight"), **steps)
  assert straight.returncode == 0, straight.stderr

  output_dir = tmp_path / "killed"
  flag_values = {**ORIGINAL_FLAGS, **steps, "output_dir": output_dir,
                 "do_train": True}
  command = [sys.executable,
             os.path.join(PROJECT_DIR, "run_scripts", "run_pretraining.py"),
             *[f"--{name}={value}" for name, value in flag_values.items()]]
  process = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
  deadline = time.time() + 300
  while not (output_dir / "model.ckpt-50.index").exists():
    assert process.poll() is None and time.time() < deadline
    time.sleep(0.01)
  process.send_signal(signal.SIGKILL)
  process.wait()
  killed_at = int(tf.train.latest_checkpoint(str(output_dir)).split("-")[-1])
  assert killed_at < 600, "the run ended before it could be killed"

  resumed = pretrain(str(output_dir), **steps)
  assert resumed.returncode == 0, resumed.stderr
  assert f"model.ckpt-{killed_at} at step {killed_at}" in resumed.stderr
  assert f"Training from step {killed_at} to 600" in resumed.stderr
  assert_checkpoints_close(str(output_dir / "model.ckpt-600"),
                           str(tmp_path / "straight" / "model.ckpt-600"),
                           atol=1e-5)


@pytest.mark.shared
def test_finished_run_is_not_trained_again(reference_run, tmp_path):
  output_dir, _ = reference_run
  result = pretrain(output_dir)
  assert result.returncode == 0, result.stderr
  assert "Already trained to step 10 of 10" in result.stderr


@pytest.mark.shared
def test_multi_worker_trains_one_set_of_checkpoints(tmp_path):
  output_dir = str(tmp_path / "out")
  logs = run_two_workers("run_pretraining.py", {
      **ORIGINAL_FLAGS, "output_dir": output_dir, "do_train": True,
      "train_batch_size": 4, "num_train_steps": 6, "iterations_per_loop": 2})
  assert "on 2 replicas" in logs[0]
  assert sorted(name for name in os.listdir(output_dir)
                if name.endswith(".index")) == ["model.ckpt-3.index",
                                                "model.ckpt-6.index"]
  losses = read_scalars(output_dir, "loss")
  assert sorted(losses) == [2, 3, 5, 6]  # loops end at each save too
  assert losses[6] < losses[2]
  assert int(tf.train.load_checkpoint(os.path.join(
      output_dir, "model.ckpt-6")).get_tensor("global_step")) == 6


@pytest.mark.shared
@pytest.mark.parametrize("overrides, message", [
    ({"max_seq_length": 32}, "--max_seq_length"),
    ({"max_predictions_per_seq": 5}, "--max_predictions_per_seq"),
    ({"do_train": False}, "At least one of `do_train` or `do_eval`"),
    ({"init_checkpoint": "/nonexistent/model.ckpt"},
     "--init_checkpoint=/nonexistent/model.ckpt"),
    ({"gradient_accumulation_steps": 0}, "--gradient_accumulation_steps=0"),
    ({"do_train": False, "do_eval": True, "init_checkpoint": ""},
     "nothing to evaluate: no checkpoint in --output_dir="),
    ({"input_file": "/nonexistent/*.tfrecord"}, "/nonexistent/*.tfrecord"),
])
def test_bad_flags_fail_clearly_and_write_nothing(tmp_path, overrides,
                                                  message):
  output_dir = tmp_path / "out"
  result = pretrain(str(output_dir), **overrides)
  assert result.returncode != 0
  assert message in result.stderr.strip().splitlines()[-1]
  assert not output_dir.exists()


@pytest.mark.shared
@pytest.mark.parametrize("tpu_flags", [
    {"tpu": "grpc://127.0.0.1:{port}"},
    {"use_tpu": True, "tpu_name": "grpc://127.0.0.1:{port}"},
])
def test_unreachable_tpu_fails_at_once(tmp_path, tpu_flags):
  port = free_port()  # nothing listens there
  tpu_flags = {name: str(value).format(port=port)
               for name, value in tpu_flags.items()}
  start = time.time()
  result = pretrain(str(tmp_path / "out"), **tpu_flags)
  assert result.returncode != 0
  assert f"cannot reach the TPU worker at 127.0.0.1:{port}" in result.stderr
  assert time.time() - start < 60
  assert not (tmp_path / "out").exists()


ORIGINAL_FLAG_NAMES = [
    "input_file", "output_dir", "bert_config_file", "init_checkpoint",
    "max_seq_length", "max_predictions_per_seq", "do_train", "do_eval",
    "train_batch_size", "eval_batch_size", "learning_rate", "num_train_steps",
    "num_warmup_steps", "save_checkpoints_steps", "iterations_per_loop",
    "max_eval_steps", "use_tpu", "tpu_name", "tpu_zone", "gcp_project",
    "master", "num_tpu_cores"]


def test_help_lists_the_original_flags_and_the_modern_ones():
  result = run_script("run_pretraining.py", {"help": "true"})
  for name in ORIGINAL_FLAG_NAMES + [
      "tpu", "distribution_strategy", "num_gpus", "use_xla", "dtype",
      "optimizer", "gradient_accumulation_steps", "keep_checkpoint_max",
      "seed", "shuffle_buffer_size"]:
    assert f"--{name}:" in result.stdout or \
        f"--[no]{name}:" in result.stdout, name
