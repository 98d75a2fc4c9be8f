"""run_scripts/run_classifier.py end to end on small generated tasks."""

import json
import os
import random
import shutil

import numpy as np
import pytest

import bert_tf
from bert_tf import tokenization
from bert_tf.checkpoints import conversion
from bert_tf.tasks.glue import (examples as glue,
                                features as classifier_features)
from tests.support.helpers import (FINE_TUNING_FLAGS, ORIGINAL_TINY,
                                   PROJECT_DIR, SHARED_DIR,
                                   assert_cases_fail_before_writing,
                                   assert_fails_in_one_line,
                                   assert_help_lists, run_script,
                                   run_script_cases,
                                   run_script_counting_opens, run_two_workers,
                                   save_listed_checkpoint, tiny_config)
from tests.support.keyword_task import POSITIVE, VOCAB, keyword_sentences
from tests.support.serving import serve_as_documented, serve_export

# A 3-label BertForSequenceClassification folder that transformers 5 wrote.
TRANSFORMERS5 = os.path.join(PROJECT_DIR, "tests", "fixtures",
                             "huggingface", "transformers5_classifier")

def write_tsv(path, header, rows):
  path.parent.mkdir(parents=True, exist_ok=True)
  path.write_text("\n".join("\t".join(row) for row in [header, *rows]) + "\n",
                  encoding="utf-8")


def write_config(path, **overrides):
  config = tiny_config(**{"vocab_size": len(open(VOCAB).readlines()),
                          **overrides})
  path.write_text(config.to_json_string())
  return str(path)


def classify(tmp_path, data_dir, **overrides):
  flag_values = {
      "task_name": "SST-2", "data_dir": data_dir, "vocab_file": VOCAB,
      "bert_config_file": write_config(tmp_path / "bert_config.json"),
      "output_dir": tmp_path / "output", "max_seq_length": 32,
      "learning_rate": 1e-3, "num_train_epochs": 5, "iterations_per_loop": 20,
      "eval_batch_size": 64, "predict_batch_size": 16, "seed": 1,
      **overrides}
  return run_script("run_classifier.py", flag_values)


@pytest.fixture(scope="module")
def sentiment_run(tmp_path_factory):
  """A keyword task in SST-2's files, learned from a random tiny model."""
  tmp_path = tmp_path_factory.mktemp("sentiment")
  rng = random.Random(0)
  data_dir = tmp_path / "data"
  write_tsv(data_dir / "train.tsv", ["sentence", "label"],
            keyword_sentences(rng, 1000))
  write_tsv(data_dir / "dev.tsv", ["sentence", "label"],
            keyword_sentences(rng, 200))
  test_texts = [text for text, _ in keyword_sentences(rng, 37)]
  write_tsv(data_dir / "test.tsv", ["index", "sentence"],
            [[str(100 + index), text] for index, text in
             enumerate(test_texts)])
  result = classify(tmp_path, str(data_dir), do_train=True, do_eval=True,
                    do_predict=True, export_dir=tmp_path / "export")
  assert result.returncode == 0, result.stderr
  return tmp_path, test_texts


def read_results(path):
  with open(path) as reader:
    return dict(line.rstrip("\n").split(" = ") for line in reader)


def test_fine_tuning_learns_the_task(sentiment_run):
  tmp_path, _ = sentiment_run
  results = read_results(tmp_path / "output" / "eval_results.txt")
  assert list(results) == ["eval_accuracy", "eval_loss", "global_step",
                           "loss"]
  assert results["global_step"] == str(int(1000 / 32 * 5))
  assert float(results["eval_accuracy"]) >= 0.9


@pytest.mark.rerun
def test_bucket_by_length_learns_the_task_as_well(sentiment_run, tmp_path):
  """--bucket_by_length trains on batches of one length each: the task is
  learned as well (dev accuracy within noise of the mixed batches')."""
  fixed_run, _ = sentiment_run
  result = classify(tmp_path, str(fixed_run / "data"), do_train=True,
                    do_eval=True, bucket_by_length=True)
  assert result.returncode == 0, result.stderr
  accuracy = {run: float(read_results(
      run / "output" / "eval_results.txt")["eval_accuracy"])
              for run in (fixed_run, tmp_path)}
  assert accuracy[tmp_path] >= 0.9
  assert abs(accuracy[tmp_path] - accuracy[fixed_run]) <= 0.05, accuracy


def test_test_results_and_submission_file(sentiment_run):
  tmp_path, test_texts = sentiment_run
  lines = (tmp_path / "output" / "test_results.tsv").read_text().splitlines()
  probabilities = np.array([[float(value) for value in line.split("\t")]
                            for line in lines])
  assert probabilities.shape == (len(test_texts), 2)
  np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-5)
  submission = (tmp_path / "output" / "SST-2.tsv").read_text().splitlines()
  assert submission[0] == "index\tprediction"
  rows = [line.split("\t") for line in submission[1:]]
  assert [index for index, _ in rows] == [str(100 + i)
                                          for i in range(len(test_texts))]
  assert [label for _, label in rows] == [
      str(row.argmax()) for row in probabilities]
  # the model learned the keywords
  expected = ["1" if set(text.split()) & set(POSITIVE) else "0"
              for text in test_texts]
  assert np.mean([label == want for (_, label), want in
                  zip(rows, expected)]) >= 0.9


def query_export(tmp_path, version_dir, task, examples, max_seq_length=32,
                 documented_model=None):
  """Both signatures' answers for the examples, served without bert_tf
  (and the documentation's requests to documented_model, answered as it
  shows)."""
  features = classifier_features.convert_examples(
      examples, task, tokenization.FullTokenizer(VOCAB, True), max_seq_length)
  texts = {"text_a": [example.text_a for example in examples]}
  if task.has_text_pairs:
    texts["text_b"] = [example.text_b for example in examples]
  requests = {"serving_default": {name: features[name] for name in
                                  ("input_ids", "input_mask", "segment_ids")},
              "serve_text": texts}
  signatures, outputs = serve_as_documented(
      version_dir, requests, tmp_path, documented_model) if documented_model \
      else serve_export(version_dir, requests, tmp_path)
  assert signatures == ["serve_text", "serving_default"]
  return {"by_ids": outputs["serving_default"],
          "by_text": outputs["serve_text"]}


def test_export_serves_ids_and_raw_text_like_the_library(sentiment_run):
  tmp_path, test_texts = sentiment_run
  assert sorted(os.listdir(tmp_path / "export")) == ["1"]
  task = glue.get_task("sst-2")
  examples = glue.read_examples(task, str(tmp_path / "data"), "test")
  answer = query_export(tmp_path, tmp_path / "export" / "1", task, examples,
                        documented_model="sst2")
  library = np.loadtxt(tmp_path / "output" / "test_results.tsv", ndmin=2)
  np.testing.assert_allclose(answer["by_ids"]["probabilities"], library,
                             atol=1e-5)
  np.testing.assert_allclose(answer["by_text"]["probabilities"], library,
                             atol=1e-5)
  submission = (tmp_path / "output" / "SST-2.tsv").read_text().splitlines()
  assert answer["by_text"]["labels"] == [line.split("\t")[1]
                                         for line in submission[1:]]


# A run's resume bookkeeping: Python's, the same on every TensorFlow; one
# leg of CI runs it.
@pytest.mark.rerun
def test_a_finished_run_resumes_and_exports_a_new_version(sentiment_run):
  tmp_path, _ = sentiment_run
  result = classify(tmp_path, str(tmp_path / "data"), do_train=True,
                    export_dir=tmp_path / "export")
  assert result.returncode == 0, result.stderr
  assert "Already trained to step 156 of 156" in result.stderr
  assert sorted(os.listdir(tmp_path / "export")) == ["1", "2"]


@pytest.mark.shared
def test_fine_tuning_starts_from_the_init_checkpoint(tmp_path):
  """With learning rate 0, the run's checkpoint holds the released encoder
  unchanged and a fresh output_weights/output_bias head. The release's
  directory alone gives the config, vocabulary and casing; the run reads
  its vocab.txt once (checks, tokenizers, export and the copy in
  --output_dir all take that one read)."""
  import tensorflow as tf
  release = tmp_path / "release"
  shutil.copytree(ORIGINAL_TINY, release)
  vocab = release / "vocab.txt"
  vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
                             + [f"word{i}" for i in range(94)]) + "\n")
  data_dir = tmp_path / "data"
  write_tsv(data_dir / "train.tsv", ["sentence", "label"],
            [[f"word{i} word{i + 1}", str(i % 2)] for i in range(8)])
  result, vocab_reads = run_script_counting_opens("run_classifier.py", {
      "task_name": "SST-2", "data_dir": data_dir, "init_checkpoint": release,
      "output_dir": tmp_path / "output", "max_seq_length": 32,
      "do_train": True, "learning_rate": 0.0, "num_train_epochs": 1,
      "train_batch_size": 4, "export_dir": tmp_path / "export"}, vocab)
  assert result.returncode == 0, result.stderr
  assert vocab_reads == 1
  assert f"bert_config: {release}/bert_config.json (from --init_checkpoint" \
      in result.stderr
  assert f"vocab_file: {vocab} (from --init_checkpoint" in result.stderr
  assert "do_lower_case: True (as" in result.stderr
  # The output directory is a model directory: the run's config (its head's
  # labels among the extra fields) and vocabulary beside its checkpoints.
  assert (tmp_path / "output" / "vocab.txt").read_bytes() == \
      vocab.read_bytes()
  written = bert_tf.BertConfig.from_json_file(
      str(tmp_path / "output" / "bert_config.json"))
  assert written == bert_tf.BertConfig.from_json_file(
      str(release / "bert_config.json"))
  assert written.extra_fields["id2label"] == {"0": "0", "1": "1"}
  # ... which converts to Hugging Face with the task's labels, and opens.
  conversion.convert(str(tmp_path / "output"), str(tmp_path / "hf"),
                     "huggingface")
  hf_config = json.loads((tmp_path / "hf" / "config.json").read_text())
  assert hf_config["architectures"] == ["BertForSequenceClassification"]
  assert hf_config["id2label"] == {"0": "0", "1": "1"}
  assert bert_tf.load_pretrained(str(tmp_path / "output")).labels == \
      ["0", "1"]
  ours = tf.train.load_checkpoint(str(tmp_path / "output" / "model.ckpt-2"))
  released = tf.train.load_checkpoint(os.path.join(ORIGINAL_TINY,
                                                   "bert_model.ckpt"))
  encoder = [name for name in released.get_variable_to_shape_map()
             if name.startswith("bert/")]
  assert len(encoder) == 39
  for name in encoder:
    np.testing.assert_array_equal(ours.get_tensor(name),
                                  released.get_tensor(name), err_msg=name)
  shapes = ours.get_variable_to_shape_map()
  assert shapes["output_weights"] == [2, 32]
  assert shapes["output_bias"] == [2]
  assert "output_weights/adam_m" in shapes
  assert not any(name.startswith("cls/") for name in shapes)


@pytest.mark.shared
def test_lora_rank_trains_adapters_and_writes_them_merged(tmp_path):
  """--lora_rank=2: the query and value kernels move (their adapters are
  merged into the checkpoint), every other encoder weight is the
  release's, the head trains with Adam slots, the adapters have no
  checkpoint names, and the export serves the merged model. A rank under
  1 or over the hidden size, or adapters on a random encoder (no
  --init_checkpoint), are refused before any work."""
  import tensorflow as tf
  release = tmp_path / "release"
  shutil.copytree(ORIGINAL_TINY, release)
  (release / "vocab.txt").write_text("\n".join(
      ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
      + [f"word{i}" for i in range(94)]) + "\n")
  data_dir = tmp_path / "data"
  write_tsv(data_dir / "train.tsv", ["sentence", "label"],
            [[f"word{i} word{i + 1}", str(i % 2)] for i in range(8)])
  result = run_script("run_classifier.py", {
      "task_name": "SST-2", "data_dir": data_dir, "init_checkpoint": release,
      "output_dir": tmp_path / "output", "max_seq_length": 16,
      "do_train": True, "learning_rate": 0.1, "num_train_epochs": 1,
      "train_batch_size": 4, "lora_rank": 2,
      "export_dir": tmp_path / "export"})
  assert result.returncode == 0, result.stderr
  ours = tf.train.load_checkpoint(str(tmp_path / "output" / "model.ckpt-2"))
  released = tf.train.load_checkpoint(f"{ORIGINAL_TINY}/bert_model.ckpt")
  shapes = ours.get_variable_to_shape_map()
  assert not [name for name in shapes if "lora" in name]
  assert "output_weights/adam_m" in shapes
  assert not [name for name in shapes
              if name.startswith("bert/") and name.endswith("adam_m")]
  for name in released.get_variable_to_shape_map():
    if not name.startswith("bert/"):
      continue
    moved = not np.array_equal(ours.get_tensor(name),
                               released.get_tensor(name))
    adapted = name.endswith(("self/query/kernel", "self/value/kernel"))
    assert moved == adapted, name
  assert (tmp_path / "export").exists()
  assert_cases_fail_before_writing("run_classifier.py", {
      "task_name": "SST-2", "data_dir": data_dir, "init_checkpoint": release,
      "max_seq_length": 16, "do_train": True}, {
          "--lora_rank=0: must be at least 1$": {"lora_rank": 0},
          "--lora_rank=33: must be at most the hidden_size, 32 "
          f"\\({release}/bert_config.json\\)$": {"lora_rank": 33},
          "--lora_rank=2: adapters train on a pretrained encoder, which "
          "stays frozen; give --init_checkpoint$": {
              "lora_rank": 2, "init_checkpoint": "",
              "bert_config_file": release / "bert_config.json",
              "vocab_file": release / "vocab.txt"}}, tmp_path)


@pytest.mark.shared
def test_lora_rank_trains_the_pooler_a_folder_lacks(tmp_path):
  """--lora_rank from a BertForQuestionAnswering folder, which has no
  pooler: the classifier's new pooler trains with the adapters and the
  head (Adam slots in each checkpoint), the folder's other weights stay
  as they are (query and value hold their adapters merged); a resumed run
  trains the same weights from their restored slots, and its export
  holds the pooler trained."""
  import tensorflow as tf
  from bert_tf.checkpoints.huggingface.reader import HuggingFaceFolder
  folder = os.path.join(SHARED_DIR, "reference", "huggingface",
                        "bert_for_question_answering")
  write_tsv(tmp_path / "data" / "train.tsv", ["sentence", "label"],
            [["the quick brown fox", "1"], ["the lazy dog", "0"]] * 4)

  flags = {"task_name": "SST-2", "data_dir": tmp_path / "data",
           "init_checkpoint": folder, "output_dir": tmp_path / "output",
           "max_seq_length": 8, "do_train": True, "learning_rate": 0.1,
           "num_train_epochs": 1, "train_batch_size": 4, "lora_rank": 2}
  assert run_script_cases("run_classifier.py", [flags, {
      **flags, "num_train_epochs": 2, "export_dir": tmp_path / "export"}]) \
      == [(0, "")] * 2
  first, resumed = (tf.train.load_checkpoint(
      str(tmp_path / "output" / f"model.ckpt-{step}")) for step in (2, 4))
  pooler = "bert/pooler/dense/kernel"
  for checkpoint in (first, resumed):
    assert sorted(name for name in checkpoint.get_variable_to_shape_map()
                  if name.startswith("bert/") and "/adam_" in name) == [
                      f"bert/pooler/dense/{part}/{slot}"
                      for part in ("bias", "kernel")
                      for slot in ("adam_m", "adam_v")]
    assert np.any(checkpoint.get_tensor(f"{pooler}/adam_m"))
  assert not np.array_equal(resumed.get_tensor(pooler),
                            first.get_tensor(pooler))
  released = HuggingFaceFolder(folder)
  for name in released.get_variable_to_shape_map():
    if name.startswith("bert/"):
      moved = not np.array_equal(resumed.get_tensor(name),
                                 released.get_tensor(name))
      assert moved == name.endswith(("query/kernel", "value/kernel")), name
  exported = tf.train.load_checkpoint(
      str(tmp_path / "export" / "1" / "variables" / "variables"))
  assert any(np.array_equal(exported.get_tensor(name),
                            resumed.get_tensor(pooler))
             for name in exported.get_variable_to_shape_map())


def test_multi_worker_predictions_keep_the_test_order(sentiment_run):
  """Two workers split each batch; Trainer.predict puts the gathered
  outputs back in file order, padding dropped (37 examples, batches of 16)."""
  tmp_path, _ = sentiment_run
  output_dir = tmp_path / "two_workers"
  shutil.copytree(tmp_path / "output", output_dir)
  for name in ("test_results.tsv", "SST-2.tsv"):
    (output_dir / name).unlink()
  run_two_workers("run_classifier.py", {
      "task_name": "SST-2", "data_dir": tmp_path / "data",
      "vocab_file": VOCAB, "bert_config_file": tmp_path / "bert_config.json",
      "output_dir": output_dir, "max_seq_length": 32,
      "predict_batch_size": 16, "do_predict": True})
  np.testing.assert_allclose(
      np.loadtxt(output_dir / "test_results.tsv"),
      np.loadtxt(tmp_path / "output" / "test_results.tsv"), atol=1e-5)
  assert (output_dir / "SST-2.tsv").read_text() == (
      tmp_path / "output" / "SST-2.tsv").read_text()


STS_HEADER = ["index", "genre", "filename", "year", "old_index", "source1",
              "source2", "sentence1", "sentence2", "score"]


def test_sts_b_regression_exports_predictions(tmp_path):
  rng = random.Random(1)
  data_dir = tmp_path / "data"
  rows = lambda count, labelled: [
      [str(index), "main", "f", "2012", "0", "s", "s", a, b]
      + ([f"{float(label) * 5:.1f}"] if labelled else [])
      for index, (a, label), (b, _) in zip(
          range(count), keyword_sentences(rng, count),
          keyword_sentences(rng, count))]
  write_tsv(data_dir / "train.tsv", STS_HEADER, rows(64, True))
  write_tsv(data_dir / "dev.tsv", STS_HEADER, rows(16, True))
  write_tsv(data_dir / "test.tsv", STS_HEADER[:-1], rows(5, False))
  result = classify(tmp_path, str(data_dir), task_name="STS-B",
                    do_train=True, do_eval=True, do_predict=True,
                    num_train_epochs=1, export_dir=tmp_path / "export")
  assert result.returncode == 0, result.stderr
  results = read_results(tmp_path / "output" / "eval_results.txt")
  assert list(results) == ["eval_loss", "global_step", "loss", "pearson",
                           "spearman"]
  predictions = np.loadtxt(tmp_path / "output" / "test_results.tsv")
  assert predictions.shape == (5,)
  task = glue.get_task("sts-b")
  answer = query_export(tmp_path, tmp_path / "export" / "1", task,
                        glue.read_examples(task, str(data_dir), "test"))
  np.testing.assert_allclose(answer["by_text"]["predictions"], predictions,
                             atol=1e-5)
  assert "labels" not in answer["by_text"]
  # Its --output_dir converts to a regression head, not run_swag's one
  # logit, and opens as one.
  conversion.convert(str(tmp_path / "output"), str(tmp_path / "hf"),
                     "huggingface")
  hf_config = json.loads((tmp_path / "hf" / "config.json").read_text())
  assert hf_config["architectures"] == ["BertForSequenceClassification"]
  assert hf_config["problem_type"] == "regression"
  assert bert_tf.load_pretrained(str(tmp_path / "hf")).model.problem_type \
      == "regression"


MNLI_COLUMNS = ["index", "promptID", "pairID", "genre", "s1_binary",
                "s2_binary", "s1_parse", "s2_parse", "sentence1", "sentence2"]


# Which files a run writes, and how it ranks: Python's work, the same on
# every TensorFlow; one leg of CI runs it.
@pytest.mark.rerun
def test_mnli_writes_matched_and_mismatched_results(tmp_path):
  rng = random.Random(2)
  labels = ["contradiction", "entailment", "neutral"]
  def rows(count, labelled):
    return [[str(index), "1", "1n", "fiction", "-", "-", "-", "-", a, b]
            + ([labels[int(label)]] if labelled else [])
            for index, (a, label), (b, _) in zip(
                range(count), keyword_sentences(rng, count),
                keyword_sentences(rng, count))]
  data_dir = tmp_path / "data"
  write_tsv(data_dir / "train.tsv", MNLI_COLUMNS + ["gold_label"],
            rows(64, True))
  for name in ("dev_matched", "dev_mismatched"):
    write_tsv(data_dir / f"{name}.tsv", MNLI_COLUMNS + ["gold_label"],
              rows(10, True))
  for name in ("test_matched", "test_mismatched"):
    write_tsv(data_dir / f"{name}.tsv", MNLI_COLUMNS, rows(6, False))
  result = classify(tmp_path, str(data_dir), task_name="MNLI", do_train=True,
                    do_eval=True, do_predict=True, num_train_epochs=1)
  assert result.returncode == 0, result.stderr
  output = tmp_path / "output"
  for suffix in ("", "_mismatched"):
    assert "eval_accuracy" in read_results(output / f"eval_results{suffix}.txt")
    assert np.loadtxt(output / f"test_results{suffix}.tsv").shape == (6, 3)
  for name in ("MNLI-m.tsv", "MNLI-mm.tsv"):
    rows = (output / name).read_text().splitlines()[1:]
    assert len(rows) == 6
    assert {row.split("\t")[1] for row in rows} <= set(labels)


def bad_input_cases(tmp_path):
  """{message: (train rows, flag overrides)}; files made under tmp_path."""
  os.mkfifo(tmp_path / "fifo")
  (tmp_path / "notes.txt").write_text("the user's")
  other_model = tmp_path / "other_model"
  config = write_config(tmp_path / "bert_config.json")
  save_listed_checkpoint(
      bert_tf.BertPretrainer(bert_tf.BertConfig.from_json_file(config)),
      str(other_model), 3)
  shutil.copytree(TRANSFORMERS5, tmp_path / "hf_folder")
  good = [["a good film", "1"]]
  return {
      "train.tsv:3: expected at least 2 tab-separated columns, found 1":
          ([["a good film", "1"], ["no label column"]], {}),
      "train.tsv:2: label 'positive' is not one of \\['0', '1'\\]":
          ([["a good film", "positive"]], {}),
      "train.tsv: no examples": ([], {}),
      "--task_name=imdb: unknown task": (good, {"task_name": "imdb"}),
      "dev.tsv: no such file": (good, {"do_eval": True}),
      f"vocab.txt: {len(open(VOCAB).readlines())} tokens, but vocab_size in "
      f".*small_vocab.json is 500":
          (good, {"bert_config_file": write_config(
              tmp_path / "small_vocab.json", vocab_size=500)}),
      "model.ckpt-3 is a checkpoint of another model \\(it lacks "
      "output_weights, output_bias\\)": (good, {"output_dir": other_model}),
      "--output_dir=.*hf_folder holds config.json, a Hugging Face "
      "folder's config: the directory would open as that model":
          (good, {"output_dir": tmp_path / "hf_folder"}),
      "--output_dir=.*notes.txt is a file, not a directory":
          (good, {"output_dir": tmp_path / "notes.txt"}),
      "--export_dir=.*fifo is a FIFO, not a directory":
          (good, {"export_dir": tmp_path / "fifo"}),
      "--output_dir=.*SST-2.tsv is a FIFO, not a regular file":
          (good, {"do_predict": True}),
  }


# Refused before any work, in one line: Python's checks, the same on every
# TensorFlow; one leg of CI runs it.
@pytest.mark.rerun
def test_bad_input_fails_in_one_line_and_writes_nothing(tmp_path):
  cases = bad_input_cases(tmp_path)
  flag_values = []
  for number, (train_rows, overrides) in enumerate(cases.values()):
    data_dir = tmp_path / f"data{number}"
    write_tsv(data_dir / "train.tsv", ["sentence", "label"], train_rows)
    write_tsv(data_dir / "test.tsv", ["index", "sentence"], [["0", "a"]])
    output_dir = tmp_path / f"output{number}"
    output_dir.mkdir()
    os.mkfifo(output_dir / "SST-2.tsv")
    flag_values.append({
        "task_name": "SST-2", "data_dir": data_dir, "vocab_file": VOCAB,
        "bert_config_file": tmp_path / "bert_config.json",
        "output_dir": output_dir, "max_seq_length": 32, "do_train": True,
        "train_batch_size": 1,
        **overrides})
  results = run_script_cases("run_classifier.py", flag_values)
  for number, (message, result) in enumerate(zip(cases, results)):
    assert_fails_in_one_line(result, "run_classifier", message)
    assert os.listdir(tmp_path / f"output{number}") == ["SST-2.tsv"]
  # A run whose checkpoint does not load leaves no model files either.
  assert sorted(os.listdir(tmp_path / "other_model")) == [
      "checkpoint", "model.ckpt-3.data-00000-of-00001", "model.ckpt-3.index"]
  assert (tmp_path / "notes.txt").read_text() == "the user's"
  assert sorted(os.listdir(tmp_path / "hf_folder")) == sorted(
      os.listdir(TRANSFORMERS5))


# Which directories a run may own: Python's checks, the same on every
# TensorFlow (the training and evaluation are other tests' too); one leg of
# CI runs it.
@pytest.mark.shared
@pytest.mark.rerun
def test_output_dirs_that_cannot_be_the_runs_are_refused_before_work(
    tmp_path):
  """The release folder given as both --init_checkpoint and --output_dir
  (directly or through a link) is named for what it is; an empty
  --output_dir is refused; a run lock that is a symlink (to a user's file)
  or a FIFO is never opened through, written or removed."""
  release = tmp_path / "uncased_L-2_H-32"
  shutil.copytree(ORIGINAL_TINY, release)
  (release / "vocab.txt").write_text("\n".join(
      ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
      + [f"word{i}" for i in range(94)]) + "\n")
  released = sorted(os.listdir(release))
  (tmp_path / "link").symlink_to(release)
  for split in ("train", "dev"):
    write_tsv(tmp_path / "data" / f"{split}.tsv", ["sentence", "label"],
              [["word1 word2", "1"], ["word3", "0"]])
  users = tmp_path / "users.txt"
  users.write_text("the user's")
  for name, make in (("to_users", lambda lock: lock.symlink_to(users)),
                     ("fifo", os.mkfifo)):
    (tmp_path / name).mkdir()
    make(tmp_path / name / ".bert_tf_run.lock")
  common = {"task_name": "SST-2", "data_dir": tmp_path / "data",
            "vocab_file": release / "vocab.txt",
            "bert_config_file": release / "bert_config.json",
            "init_checkpoint": f"{release}/", "max_seq_length": 32,
            "do_train": True, "train_batch_size": 1}
  the_release = (r"is the directory of the --init_checkpoint, .*"
                 r"uncased_L-2_H-32/bert_model.ckpt: the run would resume "
                 r"from the checkpoint there as its own")
  cases = {
      f"--output_dir=.*uncased_L-2_H-32/ {the_release}":
          {"output_dir": f"{release}/"},
      f"--output_dir=.*link {the_release}":
          {"output_dir": tmp_path / "link",
           "init_checkpoint": release / "bert_model.ckpt"},
      "--output_dir is empty": {"output_dir": ""},
      "--output_dir=.*to_users: .*to_users/.bert_tf_run.lock is a symlink, "
      "not the run lock file": {"output_dir": tmp_path / "to_users"},
      "--output_dir=.*fifo: .*fifo/.bert_tf_run.lock is a FIFO, not the run "
      "lock file": {"output_dir": tmp_path / "fifo"},
  }
  # A run's own checkpoint in its --output_dir is taken: the original's
  # README evaluates what a run trained so.
  run = tmp_path / "run"
  outcomes = run_script_cases("run_classifier.py", [
      {**common, **flags} for flags in cases.values()] + [
          {**common, "output_dir": run, "num_train_epochs": 1},
          {**common, "output_dir": run, "init_checkpoint": run / "model.ckpt-2",
           "do_train": False, "do_eval": True}])
  for expected, outcome in zip(cases, outcomes):
    assert_fails_in_one_line(outcome, "run_classifier", expected)
  assert outcomes[-2:] == [(0, "")] * 2, outcomes[-2:]
  assert "eval_accuracy" in (run / "eval_results.txt").read_text()
  assert sorted(os.listdir(release)) == released
  assert users.read_text() == "the user's"
  assert (tmp_path / "to_users" / ".bert_tf_run.lock").is_symlink()
  assert os.listdir(tmp_path / "fifo") == [".bert_tf_run.lock"]


# Which flags a resumed run must keep (run_flags.json): Python's checks, the
# same on every TensorFlow (training adapters from a folder is
# test_lora_rank_trains_the_pooler_a_folder_lacks's too); one leg of CI runs it.
@pytest.mark.rerun
def test_a_head_of_other_labels_is_new_and_resuming_names_a_flag_changed(
    tmp_path):
  """--init_checkpoint=<a 3-label folder> for SST-2's 2 labels trains a
  new head on the folder's encoder (the warning: test_trainer). Its
  checkpoints then go on only with the flags that made them: without
  --lora_rank, with another, or for another --task_name, the run stops
  naming the flag; another --max_seq_length shapes no variable and goes
  on; evaluating them needs no --lora_rank."""
  import tensorflow as tf
  from bert_tf.checkpoints.huggingface.reader import HuggingFaceFolder
  rows = [["the film", "1"], ["a file", "0"]] * 4
  for split in ("train", "dev"):
    write_tsv(tmp_path / "sst2" / f"{split}.tsv", ["sentence", "label"], rows)
    write_tsv(tmp_path / "cola" / f"{split}.tsv", ["x", "0", "*", "no"],
              [["x", label, "*", text] for text, label in rows])

  def flags(**changes):  # the first run's, changed (None: left out)
    values = {"task_name": "SST-2", "data_dir": tmp_path / "sst2",
              "init_checkpoint": TRANSFORMERS5,
              "output_dir": tmp_path / "run", "max_seq_length": 16,
              "train_batch_size": 4, "do_train": True, "lora_rank": 2,
              "num_train_epochs": 1, **changes}
    return {name: value for name, value in values.items()
            if value is not None}

  saved = "the checkpoints in --output_dir were trained with"
  cases = {
      f"--lora_rank is not given, but {saved} --lora_rank=2 \\(see "
      f".*run/run_flags.json\\): pass --lora_rank=2 to go on with them":
          {"lora_rank": None},
      f"--lora_rank=4, but {saved} --lora_rank=2": {"lora_rank": 4},
      f"--task_name=cola, but {saved} --task_name=sst-2":
          {"task_name": "CoLA", "data_dir": tmp_path / "cola"},
  }
  outcomes = run_script_cases("run_classifier.py", [flags()] + [
      flags(num_train_epochs=2, **changes) for changes in cases.values()] + [
          flags(num_train_epochs=2, max_seq_length=24),
          flags(lora_rank=None, do_train=None, do_eval=True)])
  assert outcomes[0] == (0, ""), outcomes[0]
  for expected, outcome in zip(cases, outcomes[1:]):
    assert_fails_in_one_line(outcome, "run_classifier", expected)
  assert outcomes[-2:] == [(0, "")] * 2, outcomes[-2:]
  assert read_results(tmp_path / "run" / "eval_results.txt")[
      "global_step"] == "4"
  ours = tf.train.load_checkpoint(str(tmp_path / "run" / "model.ckpt-2"))
  assert ours.get_variable_to_shape_map()["output_weights"] == [2, 32]
  name = "bert/embeddings/word_embeddings"
  np.testing.assert_array_equal(
      ours.get_tensor(name), HuggingFaceFolder(TRANSFORMERS5).get_tensor(name))


# absl's flag listing: the same on every TensorFlow; one leg of CI runs it.
@pytest.mark.rerun
def test_help_lists_the_original_flags():
  assert_help_lists("run_classifier.py",
                    FINE_TUNING_FLAGS + ("task_name", "data_dir"))
