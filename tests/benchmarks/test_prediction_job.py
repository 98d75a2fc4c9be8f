"""benchmarks/prediction_job.py's jobs on a tiny model and a three-line
test.tsv: run_classifier's command line carries each dtype, and the Model
Garden script predicts in each (bfloat16's probabilities close to float32's,
not the same); timings are never asserted."""

import os
import sys

import numpy as np
import pytest

from tests.support.helpers import PROJECT_DIR

pytestmark = pytest.mark.model_garden

TINY = ["--num_layers=1", "--hidden_size=32", "--num_heads=2",
        "--intermediate_size=37", "--vocab_size=1974", "--seq_length=16",
        "--rounds=2", "--vocab_file=" + os.path.join(
            PROJECT_DIR, "vocab", "demo_uncased_vocab.txt")]
SENTENCES = ["a gripping , funny film .", "dull and far too long .",
             "the cast is the best thing about it ."]


@pytest.fixture(name="prediction_job")
def benchmark_module(monkeypatch):
  monkeypatch.syspath_prepend(os.path.join(PROJECT_DIR, "benchmarks"))
  import prediction_job  # pylint: disable=import-outside-toplevel
  return prediction_job


@pytest.fixture(name="args")
def tiny_args(prediction_job, tmp_path):
  test_file = tmp_path / "test.tsv"
  test_file.write_text("index\tsentence\n" + "".join(
      f"{index}\t{sentence}\n" for index, sentence in enumerate(SENTENCES)),
                       encoding="utf-8")
  return prediction_job.parse_args(TINY + [f"--test_file={test_file}"])


def test_run_classifier_runs_in_each_dtype_into_a_folder_a_round(
    prediction_job, args, tmp_path):
  jobs = prediction_job.bert_tf_job(args, str(tmp_path))
  assert list(jobs) == ["float32", "bfloat16"]
  command, results = jobs["bfloat16"]
  assert "--dtype=bfloat16" in command(1)
  assert f"--output_dir={tmp_path}/bert_tf_bfloat16_1" in command(1)
  # The probabilities compared are the last round's.
  assert results == str(tmp_path / "bert_tf_bfloat16_2" / "test_results.tsv")


def run_in_this_process(command, monkeypatch):
  """[python, "-c", script, mode]'s script run here (a process would
  import TensorFlow and Model Garden again), tf_keras' global policy kept
  as it was."""
  _, _, script, mode = command
  monkeypatch.setattr(sys, "argv", ["-c", mode])
  import tf_keras  # pylint: disable=import-outside-toplevel
  previous = tf_keras.mixed_precision.global_policy()
  try:
    # pylint: disable-next=exec-used
    exec(compile(script, "<model garden job>", "exec"), {})
  finally:
    tf_keras.mixed_precision.set_global_policy(previous)


def test_the_model_garden_script_predicts_in_each_dtype(
    prediction_job, args, tmp_path, monkeypatch):
  jobs = prediction_job.model_garden_job(args, str(tmp_path))
  for command, _ in jobs.values():
    run_in_this_process(command(0), monkeypatch)
  float32, bfloat16 = (np.loadtxt(results) for _, results in jobs.values())
  assert float32.shape == (len(SENTENCES), 2)
  np.testing.assert_allclose(float32.sum(axis=1), 1, atol=1e-6)
  assert 0 < prediction_job.largest_difference(
      jobs["bfloat16"][1], jobs["float32"][1]) < 0.05
