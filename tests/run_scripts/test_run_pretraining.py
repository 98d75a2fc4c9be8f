"""run_scripts/run_pretraining.py against the original's training trajectory."""

import dataclasses
import json
import os
import signal
import time

import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from bert_tf.data import tfrecords
from bert_tf.optimization import optimizers
from bert_tf.pretraining import features as pretraining_features
from bert_tf.pretraining.dataset import pretraining_dataset
from bert_tf.pretraining.instances import TrainingInstance
from bert_tf.training.checkpoint_manager import CheckpointManager
from tests.support.helpers import (ORIGINAL_TINY, ORIGINAL_TINY_TRAIN,
                                   PROJECT_DIR,
                                   assert_checkpoints_close,
                                   assert_fails_in_one_line, free_port,
                                   kill_after_checkpoint, read_scalars,
                                   run_script, run_script_cases,
                                   run_two_workers, save_listed_checkpoint)

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


# A vocabulary of original_tiny's 99 tokens, which the run copies.
VOCAB = os.path.join(PROJECT_DIR, "tests", "fixtures", "extract_features",
                     "vocab.txt")


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory):
  """The reference settings, then 2 eval batches of 3."""
  output_dir = str(tmp_path_factory.mktemp("pretraining"))
  result = pretrain(output_dir, do_eval=True, eval_batch_size=3,
                    max_eval_steps=2, vocab_file=VOCAB)
  assert result.returncode == 0, result.stderr
  return output_dir, result.stderr


@pytest.mark.shared
def test_the_output_dir_is_a_model_directory(reference_run):
  """The run's config (its dropout 0 over the checkpoint's directory's 0.1,
  which a run may set) and --vocab_file beside its checkpoints: it loads
  and converts as it is."""
  output_dir, _ = reference_run
  with open(VOCAB, "rb") as reader:
    assert open(os.path.join(output_dir, "vocab.txt"), "rb").read() == \
        reader.read()
  assert bert_tf.BertConfig.from_json_file(
      os.path.join(output_dir, "bert_config.json")) == \
      bert_tf.BertConfig.from_json_file(ORIGINAL_FLAGS["bert_config_file"])
  assert isinstance(bert_tf.load_pretrained(output_dir).model,
                    bert_tf.BertPretrainer)


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
@pytest.mark.rerun
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
  kill_after_checkpoint("run_pretraining.py", flag_values, 50)
  killed_at = int(tf.train.latest_checkpoint(str(output_dir)).split("-")[-1])
  assert killed_at < 600, "the run ended before it could be killed"

  resumed = pretrain(str(output_dir), **steps)
  assert resumed.returncode == 0, resumed.stderr
  assert f"model.ckpt-{killed_at} at step {killed_at}" in resumed.stderr
  assert f"Training from step {killed_at} to 600" in resumed.stderr
  assert_checkpoints_close(str(output_dir / "model.ckpt-600"),
                           str(tmp_path / "straight" / "model.ckpt-600"),
                           atol=1e-5)


# What a killed or interrupted run leaves: Python's, the same on every
# TensorFlow; one leg of CI runs it.
@pytest.mark.shared
@pytest.mark.rerun
def test_ctrl_c_says_in_one_line_which_checkpoint_resumes(tmp_path):
  output_dir = tmp_path / "interrupted"
  code, stderr = kill_after_checkpoint(
      "run_pretraining.py", {
          # Steps enough that the run is still going when this process,
          # slowed by a busy machine, sees a checkpoint.
          **ORIGINAL_FLAGS, "num_train_steps": 20000,
          "save_checkpoints_steps": 50, "iterations_per_loop": 10,
          "output_dir": output_dir, "do_train": True}, 50, signal.SIGINT)
  kept = tf.train.latest_checkpoint(str(output_dir))
  assert code == 130 and "Traceback" not in stderr, stderr[-3000:]
  assert stderr.splitlines()[-1] == (
      f"run_pretraining: interrupted; the newest checkpoint kept is {kept}, "
      f"and the same command resumes from it")


# A run's resume bookkeeping: Python's, the same on every TensorFlow; one
# leg of CI runs it.
@pytest.mark.shared
@pytest.mark.rerun
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


# Refused before any work, in one line: Python's checks, the same on every
# TensorFlow; one leg of CI runs it.
@pytest.mark.shared
@pytest.mark.parametrize("overrides, message", [
    ({"max_seq_length": 32}, "--max_seq_length"),
    ({"max_predictions_per_seq": 5}, "--max_predictions_per_seq"),
    ({"do_train": False}, "At least one of `do_train` or `do_eval`"),
    ({"init_checkpoint": "/nonexistent/model.ckpt"},
     "--init_checkpoint: /nonexistent/model.ckpt: no checkpoint here"),
    ({"gradient_accumulation_steps": 0}, "--gradient_accumulation_steps=0"),
    ({"do_train": False, "do_eval": True, "init_checkpoint": ""},
     "nothing to evaluate: no checkpoint in --output_dir="),
    ({"input_file": "/nonexistent/*.tfrecord"}, "/nonexistent/*.tfrecord"),
])
@pytest.mark.rerun
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


# absl's flag listing: the same on every TensorFlow; one leg of CI runs it.
@pytest.mark.rerun
def test_help_lists_the_original_flags_and_the_modern_ones():
  result = run_script("run_pretraining.py", {"help": "true"})
  for name in ORIGINAL_FLAG_NAMES + [
      "tpu", "distribution_strategy", "num_gpus", "use_xla", "dtype",
      "optimizer", "gradient_accumulation_steps", "keep_checkpoint_max",
      "seed", "shuffle_buffer_size"]:
    assert f"--{name}:" in result.stdout or \
        f"--[no]{name}:" in result.stdout, name


def save_checkpoints(directory, steps):
  """Checkpoints of the reference model and an optimizer at these steps."""
  model = bert_tf.BertPretrainer(bert_tf.BertConfig.from_json_file(
      ORIGINAL_FLAGS["bert_config_file"]))
  optimizer = optimizers.create_optimizer(1e-3, 10, 2)
  optimizer.build(model.trainable_variables)
  manager = CheckpointManager(model, optimizer, str(directory))
  for step in steps:
    manager.save(step)


def records_with_a_fault(path, count, bad_index, fault):
  """`count` copies of the reference batch's records; record `bad_index` is
  given `fault` (bytes -> bytes) after framing."""
  originals = list(tfrecords.read_records(ORIGINAL_FLAGS["input_file"]))
  frames = [tfrecords.tfrecord_frame(originals[index % len(originals)])
            for index in range(count)]
  frames[bad_index] = fault(frames[bad_index])
  path.write_bytes(b"".join(frames))
  return path


def flip_a_data_byte(frame):
  return frame[:20] + bytes([frame[20] ^ 0xFF]) + frame[21:]


def other_lengths(frame):
  instance = TrainingInstance(input_ids=[101, 5, 102, 6, 102],
                              first_segment_length=3, masked_lm_positions=[1],
                              masked_lm_ids=[5], is_random_next=False)
  return tfrecords.tfrecord_frame(pretraining_features.serialize_instance(
      instance, 32, 4))


@pytest.fixture(scope="module")
def bad_input_runs(tmp_path_factory):
  """Damaged inputs, checkpoints and output directories, in one process."""
  directory = tmp_path_factory.mktemp("bad_inputs")
  corrupt = records_with_a_fault(directory / "corrupt.tfrecord", 40, 30,
                                 flip_a_data_byte)
  mixed = records_with_a_fault(directory / "mixed.tfrecord", 40, 30,
                               other_lengths)
  text = directory / "corpus.txt"
  text.write_text("A sentence of text.\n")
  truncated = directory / "truncated" / "bert_model.ckpt"
  truncated.parent.mkdir()
  for suffix in (".index", ".data-00000-of-00001"):
    data = open(f"{ORIGINAL_FLAGS['init_checkpoint']}{suffix}", "rb").read()
    (directory / "truncated" / f"bert_model.ckpt{suffix}").write_bytes(
        data[:len(data) // 2] if suffix.startswith(".data") else data)
  reference = bert_tf.BertConfig.from_json_file(
      ORIGINAL_FLAGS["bert_config_file"])
  wider = directory / "wider_config.json"
  dataclasses.replace(reference, intermediate_size=40).to_json_file(
      str(wider))
  small = directory / "small_vocab_config.json"
  dataclasses.replace(reference, vocab_size=20).to_json_file(str(small))
  other_model = directory / "other_model"
  save_listed_checkpoint(bert_tf.BertEncoder(reference), str(other_model), 5)
  damaged = directory / "damaged_newest"
  save_checkpoints(damaged, [2, 4])
  data = damaged / "model.ckpt-4.data-00000-of-00001"
  data.write_bytes(data.read_bytes()[:100])
  run = {**ORIGINAL_FLAGS, "do_train": True, "num_train_steps": 20,
         "save_checkpoints_steps": 2}
  cases = {
      "corrupt record": {**run, "input_file": corrupt,
                         "output_dir": directory / "out_corrupt"},
      "mixed lengths": {**run, "input_file": mixed,
                        "output_dir": directory / "out_mixed"},
      "text input": {**run, "input_file": text,
                     "output_dir": directory / "out_text"},
      "ids past vocab_size": {**run, "bert_config_file": small,
                              "init_checkpoint": "",
                              "output_dir": directory / "out_small"},
      "truncated init_checkpoint": {**run, "init_checkpoint": truncated,
                                    "output_dir": directory / "out_trunc"},
      "config of another shape": {**run, "bert_config_file": wider,
                                  "output_dir": directory / "out_wider"},
      "another model in output_dir": {**run, "output_dir": other_model},
      "output_dir is a file": {**run, "output_dir": text},
      "resume past a damaged checkpoint": {
          **run, "num_train_steps": 6, "output_dir": damaged},
      "init_checkpoint is a directory": {
          **run, "num_train_steps": 1, "init_checkpoint": ORIGINAL_TINY,
          "output_dir": directory / "out_dir"},
  }
  results = dict(zip(cases, run_script_cases("run_pretraining.py",
                                             cases.values())))
  return directory, results


BAD_INPUT_MESSAGES = {
    "corrupt record": "corrupt.tfrecord: record 30 \\(byte \\d+\\): corrupt, "
                      "the data's checksum does not match \\(the checkpoints "
                      "in --output_dir are kept, the newest model.ckpt-10\\)",
    "mixed lengths": "mixed.tfrecord: record 30 has 32 input_ids, but "
                     "--max_seq_length=16; pass --max_seq_length=32 .*the "
                     "newest model.ckpt-10",
    "text input": "corpus.txt: not a TFRecord file \\(it begins like text",
    "ids past vocab_size": "batch.tfrecord: record 0 has input_ids \\d+, but "
                           "the model's vocab_size is 20",
    "truncated init_checkpoint": "truncated/bert_model.ckpt: cannot read "
                                 "variable .* truncated or damaged",
    # The flag disagrees with the config beside the checkpoint: both named.
    "config of another shape": "--bert_config_file=.*wider_config.json is "
                               "not the config of --init_checkpoint's "
                               ".*original_tiny/bert_config.json: "
                               "intermediate_size 40 against 37",
    "another model in output_dir": "model.ckpt-5 is a checkpoint of another "
                                   "model \\(it lacks cls/.*; to start this "
                                   "run fresh",
    "output_dir is a file": "--output_dir=.*corpus.txt is a file, not a "
                            "directory",
}


@pytest.mark.shared
@pytest.mark.parametrize("case", BAD_INPUT_MESSAGES)
def test_bad_inputs_fail_in_one_line(bad_input_runs, case):
  _, results = bad_input_runs
  assert_fails_in_one_line(results[case], "run_pretraining",
                           BAD_INPUT_MESSAGES[case])


@pytest.mark.shared
def test_checkpoints_written_before_a_bad_record_are_kept(bad_input_runs):
  directory, _ = bad_input_runs
  assert tf.train.latest_checkpoint(
      str(directory / "out_corrupt")).endswith("model.ckpt-10")
  for output in ("out_text", "out_small", "out_trunc", "out_wider"):
    assert not (directory / output).exists(), output


@pytest.mark.shared
def test_init_checkpoint_may_be_a_directory(bad_input_runs):
  directory, results = bad_input_runs
  assert results["init_checkpoint is a directory"][0] == 0
  trained = tf.train.load_checkpoint(str(directory / "out_dir" /
                                         "model.ckpt-1"))
  original = tf.train.load_checkpoint(ORIGINAL_FLAGS["init_checkpoint"])
  name = "bert/embeddings/LayerNorm/gamma"  # moved by one small step only
  np.testing.assert_allclose(trained.get_tensor(name),
                             original.get_tensor(name), atol=2e-3)


@pytest.mark.shared
def test_a_damaged_newest_checkpoint_is_skipped_on_resume(bad_input_runs):
  directory, results = bad_input_runs
  assert results["resume past a damaged checkpoint"][0] == 0
  assert sorted(read_scalars(str(directory / "damaged_newest"), "loss")) == [
      3, 4, 5, 6]  # resumed from model.ckpt-2, not from scratch
  state = tf.train.get_checkpoint_state(str(directory / "damaged_newest"))
  assert [os.path.basename(path) for path in state.all_model_checkpoint_paths
          ] == ["model.ckpt-2", "model.ckpt-4", "model.ckpt-6"]
  tf.train.load_checkpoint(str(directory / "damaged_newest" /
                               "model.ckpt-4")).get_tensor("global_step")
