"""run_scripts/run_swag.py end to end on a synthetic four-way task."""

import os
import re

import numpy as np
import pytest

import bert_tf
from bert_tf import tokenization
from bert_tf.tasks.swag import (examples as swag,
                                features as multiple_choice_features)
from tests.support.helpers import (FINE_TUNING_FLAGS,
                                   assert_cases_fail_before_writing,
                                   assert_fails_in_one_line, assert_help_lists,
                                   hold_in_another_process, run_on_a_full_disk,
                                   run_script, run_script_cases, tiny_config)
from tests.support.serving import serve_as_documented
from tests.support.squad_fixtures import DEMO_VOCAB
from tests.support.swag_fixtures import synthetic_swag, write_swag

VOCAB_SIZE = len(open(DEMO_VOCAB, encoding="utf-8").readlines())


def common_flags(tmp_path, **overrides):
  config = tmp_path / "bert_config.json"
  config.write_text(tiny_config(
      vocab_size=VOCAB_SIZE, hidden_dropout_prob=0.0,
      attention_probs_dropout_prob=0.0).to_json_string())
  return {"vocab_file": DEMO_VOCAB, "bert_config_file": config,
          "data_dir": tmp_path / "data", "max_seq_length": 16, **overrides}


def read_results(path):
  return dict(line.split(" = ") for line in path.read_text().splitlines())


@pytest.fixture(scope="module")
def swag_run(tmp_path_factory):
  """A tiny random BERT trained to pick the ending that repeats the
  context's colour; val evaluated, test (no labels) predicted, exported."""
  tmp_path = tmp_path_factory.mktemp("swag")
  (tmp_path / "data").mkdir()
  synthetic_swag(tmp_path / "data" / "train.csv", 0, 800)
  synthetic_swag(tmp_path / "data" / "val.csv", 1, 120)
  labels = synthetic_swag(tmp_path / "data" / "test.csv", 2, 50,
                          labelled=False)
  result = run_script("run_swag.py", common_flags(
      tmp_path, output_dir=tmp_path / "output", do_train=True, do_eval=True,
      do_predict=True, train_batch_size=16, learning_rate=3e-4,
      num_train_epochs=16, iterations_per_loop=100, seed=1,
      export_dir=tmp_path / "export"))
  assert result.returncode == 0, result.stderr[-3000:]
  return tmp_path, labels


def test_it_learns_to_choose(swag_run):
  tmp_path, labels = swag_run
  results = read_results(tmp_path / "output" / "eval_results.txt")
  assert sorted(results) == ["eval_accuracy", "eval_loss", "global_step",
                             "loss"]
  assert float(results["eval_accuracy"]) >= 0.9, results
  assert results["global_step"] == "800"  # 800 rows / 16 * 16 epochs
  probabilities = np.loadtxt(tmp_path / "output" / "test_results.tsv")
  assert probabilities.shape == (50, 4)
  np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-5)
  predictions = (tmp_path / "output" / "test_predictions.tsv").read_text() \
      .splitlines()
  assert predictions[0] == "index\tprediction"
  assert predictions[1:] == [f"{index}\t{choice}" for index, choice in
                             enumerate(probabilities.argmax(axis=1))]
  assert np.mean(probabilities.argmax(axis=1) == labels) >= 0.9


def test_the_export_serves_the_choice_probabilities(swag_run):
  """From ids and from raw text (the context and the whole endings, as a
  client has them): run_swag's test_results.tsv."""
  tmp_path, _ = swag_run
  tokenizer = tokenization.FullTokenizer(DEMO_VOCAB, True)
  examples = swag.read_swag(str(tmp_path / "data" / "test.csv"), False)
  features = multiple_choice_features.convert_examples(examples[:7],
                                                       tokenizer, 16)
  signatures, outputs = serve_as_documented(tmp_path / "export" / "1", {
      "serving_default": {name: features[name] for name in
                          ("input_ids", "input_mask", "segment_ids")},
      "serve_text": {
          "context": [example.context for example in examples],
          "endings": [[f"{example.start_ending} {ending}"
                       for ending in example.endings]
                      for example in examples]}}, tmp_path, "swag")
  assert signatures == ["serve_text", "serving_default"]
  expected = np.loadtxt(tmp_path / "output" / "test_results.tsv")
  np.testing.assert_allclose(outputs["serving_default"]["probabilities"],
                             expected[:7], atol=1e-5)
  np.testing.assert_allclose(outputs["serve_text"]["probabilities"],
                             expected, atol=1e-5)
  assert outputs["serve_text"]["choice"] == expected.argmax(axis=1).tolist()


def test_keras_predicts_the_test_results(swag_run):
  """BertMultipleChoice.from_pretrained(output_dir).predict on the test
  rows' contexts and whole endings: run_swag's test_results.tsv (and so
  the export's serve_text, above) and test_predictions.tsv's choices."""
  tmp_path, _ = swag_run
  examples = swag.read_swag(str(tmp_path / "data" / "test.csv"), False)
  model = bert_tf.BertMultipleChoice.from_pretrained(tmp_path / "output",
                                                     max_seq_length=16)
  outputs = model.predict(
      ([example.context for example in examples],
       [[f"{example.start_ending} {ending}" for ending in example.endings]
        for example in examples]), verbose=0)
  expected = np.loadtxt(tmp_path / "output" / "test_results.tsv")
  np.testing.assert_allclose(outputs["probabilities"], expected, atol=1e-5)
  assert outputs["choice"].tolist() == expected.argmax(axis=1).tolist()


# Refused before any work, in one line: Python's checks, the same on every
# TensorFlow; one leg of CI runs it.
@pytest.mark.rerun
def test_bad_input_stops_before_anything_is_written(tmp_path):
  (tmp_path / "data").mkdir()
  for name in ("train.csv", "val.csv"):
    synthetic_swag(tmp_path / "data" / name, 0, 8)
  bad = tmp_path / "bad"
  bad.mkdir()
  synthetic_swag(bad / "train.csv", 0, 8)
  write_swag(bad / "val.csv", [["0", "v", "0", "s", "a", "b", "gold", "e0",
                                "e1", "e2", "e3", "5"]])
  cases = {
      r"bad/val.csv:2: label '5': expected 0 to 3": {"data_dir": bad},
      r"--data_dir=.*missing/train.csv does not exist": {
          "data_dir": tmp_path / "missing"},
      r"--learning_rate=nan: must be a finite number": {
          "data_dir": tmp_path / "data", "learning_rate": "nan"},
      r"--num_train_epochs=inf: must be a finite number": {
          "data_dir": tmp_path / "data", "num_train_epochs": "inf"},
      r"nothing to evaluate or predict: no checkpoint in "
      r"--output_dir=.*output4 and no --init_checkpoint": {
          "data_dir": tmp_path / "data", "do_train": False},
  }
  assert_cases_fail_before_writing(
      "run_swag.py", common_flags(tmp_path, do_train=True, do_eval=True),
      cases, tmp_path)


# The run lock: Python's, the same on every TensorFlow; one leg of CI runs it.
@pytest.mark.rerun
def test_a_second_run_into_the_same_output_dir_is_refused(tmp_path):
  """Two runs into one --output_dir would overwrite each other's checkpoints
  and results: while one lives, another is refused, naming the directory
  and the holder's pid."""
  (tmp_path / "data").mkdir()
  for name in ("train.csv", "val.csv"):
    synthetic_swag(tmp_path / "data" / name, 0, 8)
  holder = hold_in_another_process(tmp_path / "output")
  try:
    (outcome,) = run_script_cases("run_swag.py", [common_flags(
        tmp_path, do_train=True, output_dir=tmp_path / "output")])
  finally:
    holder.kill()
    holder.wait()
  assert_fails_in_one_line(
      outcome, "run_swag", f"--output_dir=.*output is in use by another run "
      f"\\(pid {holder.pid}\\)")
  # The holder's lock file, as a kill -9 leaves it; the next run takes it.
  assert os.listdir(tmp_path / "output") == [".bert_tf_run.lock"]


# absl's flag listing: the same on every TensorFlow; one leg of CI runs it.
@pytest.mark.rerun
def test_help_lists_the_flags():
  assert_help_lists("run_swag.py", FINE_TUNING_FLAGS + ("data_dir",))


# Python's error path, the same on every TensorFlow: one leg of CI runs it.
@pytest.mark.rerun
def test_a_full_disk_is_one_line_naming_what_was_written(swag_run, tmp_path):
  """Out of space saving a checkpoint, an export or predictions (a tmpfs
  mounted for the run): one line naming what was being written and the
  newest checkpoint kept, which the same command resumes from; no
  traceback (not a 50-line ResourceExhaustedError, nor "[Errno 28] No
  space left on device" naming no file)."""
  trained, _ = swag_run
  disk = tmp_path / "disk"
  disk.mkdir()
  kept = {f"output/{name}": trained / "output" / name
          for name in ("model.ckpt-800.index",
                       "model.ckpt-800.data-00000-of-00001",
                       "bert_config.json", "vocab.txt")}
  state = tmp_path / "checkpoint"
  state.write_text('model_checkpoint_path: "model.ckpt-800"\n'
                   'all_model_checkpoint_paths: "model.ckpt-800"\n')
  kept["output/checkpoint"] = state
  newest = (f"the newest checkpoint kept is {disk}/output/model.ckpt-800, "
            f"and the same command resumes from it")
  for flag_values, written, free_kib in (
      ({"do_train": True, "num_train_epochs": 17}, "output/model.ckpt-850",
       64),
      ({"do_predict": True, "export_dir": disk / "export"}, "export/1", 64),
      # whichever of the two files the disk filled on
      ({"do_predict": True}, r"output/test_(results|predictions).tsv( \(one "
                             r"of a set of 2 files\))?", 4)):
    result = run_on_a_full_disk("run_swag.py", common_flags(
        trained, output_dir=disk / "output", train_batch_size=16,
        **flag_values), disk, kept, free_kib)
    assert result.returncode == 1 and "Traceback" not in result.stderr, \
        result.stderr[-3000:]
    assert re.fullmatch(
        f"run_swag: no space left on device writing "
        f"{re.escape(str(disk))}/{written}; {re.escape(newest)}", result.stderr.strip().splitlines()[-1]), \
        result.stderr[-3000:]
