"""run_scripts/run_squad.py end to end on a synthetic SQuAD v2.0 task."""

import json
import os
import random
import re
import shutil
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from bert_tf import tokenization
from bert_tf.models import BertSpanLabeler
from bert_tf.tasks.squad import examples as squad
from bert_tf.tasks.squad.task import SquadTask
from bert_tf.tasks.task import SplitData
from bert_tf.models.predictor import Predictor
from bert_tf.text.squad import features as squad_features
from bert_tf.text.squad.answer_options import AnswerOptions
from tests.support.helpers import (FINE_TUNING_FLAGS, SHARED_DIR,
                                   assert_cases_fail_before_writing,
                                   assert_help_lists, run_script,
                                   run_script_cases, run_two_workers,
                                   save_listed_checkpoint, tiny_config)
from tests.support.serving import serve_as_documented, serve_export
from tests.support.squad_fixtures import DEMO_VOCAB, synthetic_squad

SEQ = dict(max_seq_length=48, doc_stride=16, max_query_length=12)


def common_flags(tmp_path, **overrides):
  config = tmp_path / "bert_config.json"
  if not config.exists():
    config.write_text(tiny_config(vocab_size=len(open(DEMO_VOCAB).readlines()))
                      .to_json_string())
  return {"vocab_file": DEMO_VOCAB, "bert_config_file": config,
          "version_2_with_negative": True, "predict_batch_size": 16,
          **SEQ, **overrides}


def read_results(path):
  return dict(line.split(" = ") for line in
              path.read_text().splitlines())


@pytest.fixture(scope="module")
def squad_run(tmp_path_factory):
  """A tiny random BERT trained on "find the coloured thing", a third of
  the questions unanswerable; dev predicted and scored; exported, serving
  contexts of up to 5000 characters (more than any SQuAD dev context)."""
  tmp_path = tmp_path_factory.mktemp("squad")
  synthetic_squad(tmp_path / "train.json", seed=0, num_paragraphs=160)
  synthetic_squad(tmp_path / "dev.json", seed=1, num_paragraphs=40)
  result = run_script("run_squad.py", common_flags(
      tmp_path, train_file=tmp_path / "train.json",
      predict_file=tmp_path / "dev.json", output_dir=tmp_path / "output",
      do_train=True, do_predict=True, train_batch_size=16,
      learning_rate=1e-3, num_train_epochs=4, iterations_per_loop=40,
      seed=1, export_dir=tmp_path / "export",
      max_serving_context_length=5000))
  assert result.returncode == 0, result.stderr[-3000:]
  return tmp_path


def test_it_learns_and_scores_the_dev_set(squad_run):
  output = squad_run / "output"
  results = read_results(output / "eval_results.txt")
  assert sorted(results) == sorted([
      "exact", "f1", "total", "HasAns_exact", "HasAns_f1", "HasAns_total",
      "NoAns_exact", "NoAns_f1", "NoAns_total", "best_exact",
      "best_exact_thresh", "best_f1", "best_f1_thresh", "global_step"])
  assert float(results["f1"]) >= 90.0
  assert int(results["total"]) == 120 and int(results["NoAns_total"]) > 20
  assert results["global_step"] == "120"
  ids = [example.qas_id for example in squad.read_squad_examples(
      str(squad_run / "dev.json"), False)]
  for name in ("predictions.json", "nbest_predictions.json",
               "null_odds.json"):
    assert list(json.loads((output / name).read_text())) == ids, name
  checkpoint = tf.train.load_checkpoint(str(output / "model.ckpt-120"))
  shapes = checkpoint.get_variable_to_shape_map()
  assert shapes["cls/squad/output_weights"] == [2, 32]
  assert shapes["cls/squad/output_bias"] == [2]
  # The pooler, which the loss does not reach, is left as it was created,
  # as the original's optimizer skips it.
  assert np.all(checkpoint.get_tensor(
      "bert/pooler/dense/kernel/adam_m") == 0)


@pytest.mark.rerun
def test_bucket_by_length_learns_as_well(squad_run, tmp_path):
  """--bucket_by_length (here with micro-batches, which split batches of
  any length): each span softmax covers its batch's length instead of
  max_seq_length, and the task is learned as well."""
  result = run_script("run_squad.py", common_flags(
      squad_run, train_file=squad_run / "train.json",
      predict_file=squad_run / "dev.json", output_dir=tmp_path / "output",
      do_train=True, do_predict=True, train_batch_size=16,
      learning_rate=1e-3, num_train_epochs=4, iterations_per_loop=40,
      seed=1, bucket_by_length=True, gradient_accumulation_steps=2))
  assert result.returncode == 0, result.stderr[-3000:]
  f1 = {run: float(read_results(run / "output" / "eval_results.txt")["f1"])
        for run in (squad_run, tmp_path)}
  assert f1[tmp_path] >= 90.0
  assert abs(f1[tmp_path] - f1[squad_run]) <= 5.0, f1


def test_training_features_are_written_as_the_original(squad_run):
  tokenizer = tokenization.FullTokenizer(DEMO_VOCAB, True)
  features = squad_features.convert_examples_to_features(
      squad.read_squad_examples(str(squad_run / "train.json"), True, True),
      tokenizer, is_training=True, **SEQ)
  records = list(tf.data.TFRecordDataset(
      str(squad_run / "output" / "train.tf_record")).as_numpy_iterator())
  assert len(records) == len(features["unique_ids"])
  for row in (0, len(records) - 1):
    parsed = tf.train.Example.FromString(records[row]).features.feature
    assert sorted(parsed) == sorted(squad_features.TRAIN_RECORD_FEATURES)
    for name in squad_features.TRAIN_RECORD_FEATURES:
      assert parsed[name].int64_list.value == list(
          np.atleast_1d(features[name][row])), name


# The threshold search and the F1 it gives: Python's scoring, the same on
# every TensorFlow (predicting from --init_checkpoint is squad_predicted's
# too); one leg of CI runs it.
@pytest.mark.rerun
def test_the_best_threshold_gives_the_best_f1_and_init_checkpoint_predicts(
    squad_run, tmp_path):
  results = read_results(squad_run / "output" / "eval_results.txt")
  flag_values = common_flags(squad_run, predict_file=squad_run / "dev.json",
                             do_predict=True)
  outcomes = run_script_cases("run_squad.py", [
      {**flag_values, "output_dir": squad_run / "output",
       "null_score_diff_threshold": results["best_f1_thresh"]},
      {**flag_values, "output_dir": tmp_path / "predicted",
       "init_checkpoint": squad_run / "output" / "model.ckpt-120"}])
  assert outcomes == [(0, ""), (0, "")]
  again = read_results(squad_run / "output" / "eval_results.txt")
  # The same F1 summed in another order (per question, against the
  # threshold search's running total): equal but for the last bits.
  assert float(again["f1"]) == pytest.approx(float(results["best_f1"]),
                                             rel=1e-12)
  assert again["best_f1"] == results["best_f1"]
  first = json.loads((squad_run / "output" / "nbest_predictions.json")
                     .read_text())
  assert json.loads((tmp_path / "predicted" / "nbest_predictions.json")
                    .read_text()) == first


# Which files a run writes, and how it ranks: Python's work, the same on
# every TensorFlow; one leg of CI runs it.
@pytest.mark.rerun
def test_a_run_replaces_the_whole_set_of_outputs(squad_run, tmp_path):
  """Predicting into one --output_dir again: a predict_file that cannot be
  scored (a question without answers) takes the earlier eval_results.txt
  away with the predictions it replaces, saying why; so does a v1.1 run
  the v2.0 run's null_odds.json."""
  dev = json.loads((squad_run / "dev.json").read_text())
  question = next(question for article in dev["data"]
                  for paragraph in article["paragraphs"]
                  for question in paragraph["qas"]
                  if not question.get("is_impossible"))
  question["answers"] = []
  (tmp_path / "unscored.json").write_text(json.dumps(dev))
  output_dir = tmp_path / "output"
  flag_values = common_flags(
      squad_run, do_predict=True, output_dir=output_dir,
      init_checkpoint=squad_run / "output" / "model.ckpt-120")
  scored = {**flag_values, "predict_file": squad_run / "dev.json"}
  assert run_script_cases("run_squad.py", [scored]) == [(0, "")]
  assert sorted(os.listdir(output_dir)) == [
      "bert_config.json", "eval.tf_record", "eval_results.txt",
      "nbest_predictions.json", "null_odds.json", "predictions.json",
      "vocab.txt"]
  unscored = run_script("run_squad.py", {
      **flag_values, "predict_file": tmp_path / "unscored.json"})
  assert unscored.returncode == 0, unscored.stderr[-3000:]
  assert f"Removed {output_dir / 'eval_results.txt'}, an earlier run's: " \
         f"not scored" in unscored.stderr
  assert sorted(os.listdir(output_dir)) == [
      "bert_config.json", "eval.tf_record", "nbest_predictions.json",
      "null_odds.json", "predictions.json", "vocab.txt"]
  assert run_script_cases("run_squad.py", [
      scored, {**scored, "version_2_with_negative": False}]) == [(0, "")] * 2
  assert sorted(os.listdir(output_dir)) == [
      "bert_config.json", "eval.tf_record", "nbest_predictions.json",
      "predictions.json", "vocab.txt"]


def test_two_workers_predict_what_one_did(squad_run, tmp_path):
  """Multi-worker prediction: each worker its share, the chief writes."""
  output_dir = tmp_path / "output"
  shutil.copytree(squad_run / "output", output_dir)
  for name in ("predictions.json", "nbest_predictions.json",
               "null_odds.json", "eval_results.txt"):
    (output_dir / name).unlink()
  run_two_workers("run_squad.py", {
      **common_flags(squad_run), "predict_file": squad_run / "dev.json",
      "output_dir": output_dir, "do_predict": True})
  # (nbest and null_odds do not depend on the threshold another test
  # may have predicted with.)
  ours, theirs = ([json.loads((directory / name).read_text())
                   for name in ("nbest_predictions.json", "null_odds.json")]
                  for directory in (output_dir, squad_run / "output"))
  assert list(ours[1]) == list(theirs[1])
  np.testing.assert_allclose(list(ours[1].values()),
                             list(theirs[1].values()), atol=1e-4)
  for qas_id, nbest in theirs[0].items():
    assert [entry["text"] for entry in ours[0][qas_id]] == [
        entry["text"] for entry in nbest]


# Which files a run writes, and how it ranks: Python's work, the same on
# every TensorFlow; one leg of CI runs it.
@pytest.mark.rerun
def test_n_best_lists_rank_every_position_unless_bucketed(squad_run,
                                                         tmp_path):
  """As the original, predictions rank a window's logits over all of
  max_seq_length, padding included (a random model's padding logits take
  many n-best places): run_squad predicts at full length, and at each
  batch's own length only with --bucket_by_length."""
  config = bert_tf.BertConfig.from_json_file(
      str(squad_run / "bert_config.json"))
  keras.utils.set_random_seed(3)
  model = BertSpanLabeler(config)
  save_listed_checkpoint(model, tmp_path / "random", 0)
  task = SquadTask(None, str(squad_run / "dev.json"),
                   doc_stride=SEQ["doc_stride"],
                   max_query_length=SEQ["max_query_length"],
                   answer_options=AnswerOptions(version_2_with_negative=True))
  examples = task.read_examples("predict")
  tokenizer = tokenization.FullTokenizer(DEMO_VOCAB, True)
  features = task.convert_examples("predict", examples, tokenizer,
                                   SEQ["max_seq_length"])
  predictor = Predictor(tf.distribute.get_strategy(), model)
  texts = {}
  for by_length in (False, True):
    answers = task.decode("predict", SplitData(examples, features),
                          predictor.predict(features, 16, by_length=by_length),
                          tokenizer)
    texts[by_length] = {qas_id: [entry["text"] for entry in nbest]
                        for qas_id, nbest in answers.nbest.items()}
  assert texts[False] != texts[True]
  for by_length in (False, True):
    output_dir = tmp_path / f"by_length_{by_length}"
    result = run_script("run_squad.py", common_flags(
        squad_run, predict_file=squad_run / "dev.json", do_predict=True,
        init_checkpoint=tmp_path / "random", output_dir=output_dir,
        bucket_by_length=by_length))
    assert result.returncode == 0, result.stderr[-3000:]
    nbest = json.loads((output_dir / "nbest_predictions.json").read_text())
    assert {qas_id: [entry["text"] for entry in entries]
            for qas_id, entries in nbest.items()} == texts[by_length]


def test_the_export_serves_the_models_logits(squad_run):
  tokenizer = tokenization.FullTokenizer(DEMO_VOCAB, True)
  features = squad_features.convert_examples_to_features(
      squad.read_squad_examples(str(squad_run / "dev.json"), False)[:5],
      tokenizer, is_training=False, **SEQ)
  inputs = {name: features[name] for name in
            ("input_ids", "input_mask", "segment_ids")}
  signatures, outputs = serve_as_documented(
      squad_run / "export" / "1", {"serving_default": inputs}, squad_run,
      "squad")
  assert signatures == ["serve_text", "serving_default"]
  model = BertSpanLabeler(bert_tf.BertConfig.from_json_file(
      str(squad_run / "bert_config.json")))
  bert_tf.load_checkpoint(model, str(squad_run / "output" / "model.ckpt-120"))
  expected = model(inputs, training=False)
  for name in ("start_logits", "end_logits"):
    np.testing.assert_allclose(outputs["serving_default"][name],
                               expected[name], atol=1e-5)


def mixed_squad_file(squad_run, path):
  """The synthetic dev set, and with ../shared the v2.0 sample and 60
  paragraphs of dev-v1.1.json (real text: accents, dashes, CJK, words the
  demo vocabulary lacks), in one v2.0 file."""
  paragraphs = [paragraph for article in json.loads(
      (squad_run / "dev.json").read_text())["data"]
                for paragraph in article["paragraphs"]]
  if os.path.isdir(SHARED_DIR):
    sample, dev = (json.loads(open(os.path.join(
        SHARED_DIR, "data", "squad", name), encoding="utf-8").read())
                   for name in ("sample-v2.0.json", "dev-v1.1.json"))
    paragraphs += [paragraph for article in sample["data"]
                   for paragraph in article["paragraphs"]]
    real = [paragraph for article in dev["data"]
            for paragraph in article["paragraphs"]]
    for paragraph in random.Random(0).sample(real, 60):
      paragraphs.append({**paragraph, "qas": [
          {**qa, "is_impossible": False} for qa in paragraph["qas"][:2]]})
  path.write_text(json.dumps({"version": "v2.0", "data": [
      {"title": "mixed", "paragraphs": paragraphs}]}))
  return [(qa["id"], qa["question"], paragraph["context"])
          for paragraph in paragraphs for qa in paragraph["qas"]]


@pytest.fixture(scope="module")
def squad_predicted(squad_run, tmp_path_factory):
  """The trained model's predictions of mixed_squad_file, and its export
  for servers without TensorFlow Text (--export_signatures=ids)."""
  tmp_path = tmp_path_factory.mktemp("squad_predicted")
  questions = mixed_squad_file(squad_run, tmp_path / "mixed.json")
  result = run_script("run_squad.py", common_flags(
      squad_run, predict_file=tmp_path / "mixed.json", do_predict=True,
      output_dir=tmp_path / "output", export_dir=tmp_path / "ids_export",
      export_signatures="ids",
      init_checkpoint=squad_run / "output" / "model.ckpt-120"))
  assert result.returncode == 0, result.stderr[-3000:]
  return tmp_path, questions


# saved_model_cli run, in a process that must not import tensorflow_text.
_SAVED_MODEL_CLI_RUN = """
import runpy, sys
sys.argv = ["saved_model_cli", "run", "--dir", sys.argv[1], "--tag_set",
            "serve", "--signature_def", "serving_default", "--input_exprs",
            f"input_ids={[[5] * 8] * 2};input_mask={[[1] * 8] * 2};"
            f"segment_ids={[[0] * 8] * 2}"]
try:
  runpy.run_module("tensorflow.python.tools.saved_model_cli",
                   run_name="__main__")
except SystemExit as stop:
  assert not stop.code, stop.code
assert "tensorflow_text" not in sys.modules
print("ran without tensorflow_text")
"""


def saved_model_cli_run(version_dir, work_dir):
  return subprocess.run([sys.executable, "-c", _SAVED_MODEL_CLI_RUN,
                         str(version_dir)], capture_output=True, text=True,
                        timeout=300, check=False, cwd=str(work_dir))


def test_an_ids_export_runs_without_tensorflow_text(squad_run,
                                                    squad_predicted):
  """--export_signatures=ids: serving_default alone, which saved_model_cli
  runs without TensorFlow Text; the full export cannot be loaded there,
  though its serving_default uses core ops only (serve_text is in the same
  SavedModel)."""
  tmp_path, _ = squad_predicted
  result = saved_model_cli_run(tmp_path / "ids_export" / "1", tmp_path)
  assert result.returncode == 0, result.stderr[-3000:]
  assert "start_logits" in result.stdout and \
      "ran without tensorflow_text" in result.stdout
  full = saved_model_cli_run(squad_run / "export" / "1", tmp_path)
  assert full.returncode != 0
  assert re.search("Op type not registered '(NormalizeUTF8|FastWordpiece"
                   "TokenizeWithOffsets)'", full.stderr), full.stderr[-3000:]
  signatures, _ = serve_export(tmp_path / "ids_export" / "1", {}, tmp_path)
  assert signatures == ["serving_default"]


def test_serve_text_answers_as_predictions_json(squad_run, squad_predicted):
  """serve_text's answers are run_squad's predictions.json, at offsets of
  the context as sent (the words there, whitespace between them as one
  space, as the original joins them), and its null odds null_odds.json's."""
  tmp_path, questions = squad_predicted
  predictions, null_odds = (
      json.loads((tmp_path / "output" / name).read_text())
      for name in ("predictions.json", "null_odds.json"))
  _, outputs = serve_export(squad_run / "export" / "1", {"serve_text": {
      "question": [question for _, question, _ in questions],
      "context": [context for _, _, context in questions]}}, tmp_path)
  answers = outputs["serve_text"]
  for row, (qas_id, _, context) in enumerate(questions):
    assert answers["null_odds"][row] == pytest.approx(null_odds[qas_id],
                                                      abs=1e-4), qas_id
    answer = answers["answer"][row]
    start, end = answers["answer_start"][row], answers["answer_end"][row]
    assert answers["has_answer"][row] == bool(predictions[qas_id])
    if not predictions[qas_id]:
      assert (answer, start, end) == ("", -1, -1)
      continue
    assert answer == predictions[qas_id], qas_id
    assert " ".join(re.split(r"[ \t\r\n\u202f]+", context[start:end])) == \
        answer, qas_id
  assert sum(map(bool, predictions.values())) > 20


def test_the_export_refuses_a_context_over_its_limit(squad_run):
  """--max_serving_context_length is in the export, so the server enforces
  it: a context of that many characters is answered, a longer one refused
  with an InvalidArgumentError naming its length and the limit."""
  serve_text = tf.saved_model.load(str(squad_run / "export" / "1")) \
      .signatures["serve_text"]
  context = ("The harbour was quiet; a Red car stood by the door. " * 100)[
      :5000]
  question = tf.constant(["what coloured thing is there ?"])
  answer = serve_text(question=question, context=tf.constant([context]))
  assert answer["answer"].numpy()[0].decode() in context
  with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(
      "context: row 0 has 5001 characters; this export answers at most "
      "5000 (run_squad --max_serving_context_length)")):
    serve_text(question=question, context=tf.constant([context + "."]))


# Refused before any work, in one line: Python's checks, the same on every
# TensorFlow; one leg of CI runs it.
@pytest.mark.rerun
def test_bad_input_stops_before_anything_is_written(tmp_path):
  (tmp_path / "broken.json").write_text('{"data": [')
  (tmp_path / "outside.json").write_text(json.dumps({"data": [{
      "paragraphs": [{"context": "a red car", "qas": [
          {"id": "far", "question": "?", "is_impossible": False,
           "answers": [{"text": "car", "answer_start": 30}]}]}]}]}))
  (tmp_path / "misplaced.json").write_text(json.dumps({"data": [{
      "paragraphs": [{"context": "a red car", "qas": [
          {"id": "off", "question": "?", "is_impossible": False,
           "answers": [{"text": "car", "answer_start": 2}]}]}]}]}))
  (tmp_path / "deep.json").write_text(
      '{"data": ' + "[" * 100000 + "]" * 100000 + "}")
  synthetic_squad(tmp_path / "good.json", seed=2, num_paragraphs=4)
  flag_values = common_flags(tmp_path, do_predict=True)
  cases = {
      # said as such, not "no questions" (nor a RecursionError traceback)
      r"misplaced.json: no answer of its 1 questions is found in its "
      r"context .*: nothing to train on": {
          "do_train": True, "train_file": tmp_path / "misplaced.json",
          "predict_file": tmp_path / "good.json"},
      r"deep.json: JSON nested too deeply to read": {
          "predict_file": tmp_path / "deep.json"},
      r"broken.json: not valid JSON": {"predict_file": tmp_path /
                                       "broken.json"},
      r"outside.json: question far, answer 1: answer_start 30": {
          "predict_file": tmp_path / "outside.json"},
      r"--predict_file=.*missing.json does not exist": {
          "predict_file": tmp_path / "missing.json"},
      r"If `do_predict` is True, then `predict_file` must be specified": {},
      r"If `do_train` is True, then `train_file` must be specified": {
          "predict_file": tmp_path / "good.json", "do_train": True},
      r"run_squad has no --do_eval": {"predict_file": tmp_path / "good.json",
                                      "do_eval": True},
      r"max_seq_length \(16\) must be greater than max_query_length \(64\)": {
          "predict_file": tmp_path / "good.json", "max_seq_length": 16,
          "max_query_length": 64},
      r"--output_dir=.*good.json is a file": {
          "predict_file": tmp_path / "good.json",
          "output_dir": tmp_path / "good.json"},
      r"--null_score_diff_threshold=nan: must be a finite number": {
          "predict_file": tmp_path / "good.json",
          "null_score_diff_threshold": "nan"},
      r"--learning_rate=-1e-05: must not be negative": {
          "predict_file": tmp_path / "good.json", "learning_rate": -1e-5},
      r"--max_serving_context_length=0: must be at least 1": {
          "predict_file": tmp_path / "good.json",
          "max_serving_context_length": 0},
  }
  assert_cases_fail_before_writing("run_squad.py", flag_values, cases,
                                   tmp_path)


# absl's flag listing: the same on every TensorFlow; one leg of CI runs it.
@pytest.mark.rerun
def test_help_lists_the_original_flags():
  help_text = assert_help_lists("run_squad.py", FINE_TUNING_FLAGS + (
      "train_file", "predict_file", "doc_stride", "max_query_length",
      "n_best_size", "max_answer_length", "verbose_logging",
      "version_2_with_negative", "null_score_diff_threshold"))
  assert "--max_seq_length: The maximum total input sequence length" in \
      help_text and "(default: '384')" in help_text
