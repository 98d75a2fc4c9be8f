"""run_scripts/extract_features.py against the original's own output on
tests/fixtures/extract_features (make_reference.py)."""

import json
import os
import shutil

import numpy as np
import pytest

import bert_tf
from bert_tf import tokenization
from bert_tf.data.text_inputs import encode_texts
from tests.support.helpers import (ORIGINAL_TINY, PROJECT_DIR,
                                   assert_fails_in_one_line, assert_help_lists,
                                   run_script_cases, tiny_config)
from tests.support.serving import serve_as_documented

FIXTURES = os.path.join(PROJECT_DIR, "tests", "fixtures", "extract_features")
FLAGS = {"input_file": os.path.join(FIXTURES, "input.txt"),
         "vocab_file": os.path.join(FIXTURES, "vocab.txt"),
         "bert_config_file": os.path.join(ORIGINAL_TINY, "bert_config.json"),
         "init_checkpoint": os.path.join(ORIGINAL_TINY, "bert_model.ckpt"),
         "layers": "-1,0", "max_seq_length": 16, "batch_size": 4}


def read_jsonl(path):
  with open(path, encoding="utf-8") as reader:
    return [json.loads(line) for line in reader]


# Output files of the fixture's runs: the two formats, and the JSONL with
# XLA and with bfloat16 compute.
RUNS = {"output.jsonl": {}, "output.npz": {"output_format": "npz"},
        "xla.jsonl": {"use_xla": "true"}, "bfloat16.jsonl": {
            "dtype": "bfloat16"}}


def model_directory(path):
  """original_tiny with the fixture's vocab.txt beside it: a release."""
  shutil.copytree(ORIGINAL_TINY, path)
  shutil.copy(FLAGS["vocab_file"], path / "vocab.txt")
  return path


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
  tmp_path = tmp_path_factory.mktemp("extract")
  outcomes = run_script_cases("extract_features.py", [
      {**FLAGS, "output_file": tmp_path / name, **flags}
      for name, flags in RUNS.items()] + [
          # The export alone, then again with the extraction.
          {**FLAGS, "input_file": "", "export_dir": tmp_path / "export"},
          {**FLAGS, "output_file": tmp_path / "exported.jsonl",
           "export_dir": tmp_path / "export"},
          # The model directory alone.
          {"input_file": FLAGS["input_file"], "layers": "-1,0",
           "max_seq_length": 16, "batch_size": 4,
           "output_file": tmp_path / "folder.jsonl",
           "init_checkpoint": model_directory(tmp_path / "release")}])
  assert [code for code, _ in outcomes] == [0] * (len(RUNS) + 3), outcomes
  return tmp_path


@pytest.mark.shared
def test_a_model_directory_alone_gives_config_vocabulary_and_casing(
    outputs):
  assert (outputs / "folder.jsonl").read_bytes() == \
      (outputs / "output.jsonl").read_bytes()


def layer_values(lines):
  return np.array([layer["values"] for line in lines
                   for feature in line["features"]
                   for layer in feature["layers"]])


@pytest.mark.shared
def test_the_jsonl_is_the_originals(outputs):
  ours = read_jsonl(outputs / "output.jsonl")
  theirs = read_jsonl(os.path.join(FIXTURES, "original_output.jsonl"))
  assert len(ours) == len(theirs) == 15
  for mine, original in zip(ours, theirs):
    assert list(mine) == ["linex_index", "features"]
    assert mine["linex_index"] == original["linex_index"]
    assert [(feature["token"], [layer["index"] for layer in
                                feature["layers"]])
            for feature in mine["features"]] == [
                (feature["token"], [layer["index"] for layer in
                                    feature["layers"]])
                for feature in original["features"]]
    np.testing.assert_allclose(
        [[layer["values"] for layer in feature["layers"]]
         for feature in mine["features"]],
        [[layer["values"] for layer in feature["layers"]]
         for feature in original["features"]], atol=1e-4)


@pytest.mark.shared
def test_the_npz_holds_the_same_layers(outputs):
  lines = read_jsonl(outputs / "output.jsonl")
  arrays = np.load(outputs / "output.npz")
  assert sorted(arrays) == ["layers", "lengths", "tokens", "values"]
  assert arrays["layers"].tolist() == [-1, 0]
  assert arrays["lengths"].tolist() == [len(line["features"])
                                        for line in lines]
  assert arrays["tokens"].tolist() == [feature["token"] for line in lines
                                       for feature in line["features"]]
  assert arrays["values"].dtype == np.float32
  np.testing.assert_allclose(arrays["values"], [
      [layer["values"] for layer in feature["layers"]]
      for line in lines for feature in line["features"]], atol=5.1e-7)
  assert os.path.getsize(outputs / "output.npz") < \
      os.path.getsize(outputs / "output.jsonl") / 2


@pytest.mark.shared
def test_xla_and_bfloat16_give_the_same_tokens_and_close_values(outputs):
  """--use_xla and --dtype reach the model (bfloat16 keeps ~3 digits)."""
  fp32 = read_jsonl(outputs / "output.jsonl")
  for name, atol in (("xla.jsonl", 1e-5), ("bfloat16.jsonl", 0.1)):
    lines = read_jsonl(outputs / name)
    assert [[feature["token"] for feature in line["features"]]
            for line in lines] == [[feature["token"] for feature in
                                    line["features"]] for line in fp32]
    np.testing.assert_allclose(layer_values(lines), layer_values(fp32),
                               atol=atol)
  assert np.abs(layer_values(read_jsonl(outputs / "bfloat16.jsonl"))
                - layer_values(fp32)).max() > 1e-4


# Refused before any work, in one line: Python's checks, the same on every
# TensorFlow; one leg of CI runs it.
@pytest.mark.shared
@pytest.mark.rerun
def test_bad_input_fails_in_one_line_and_writes_nothing(tmp_path):
  other = tiny_config(hidden_size=16, num_attention_heads=2)
  (tmp_path / "other_config.json").write_text(other.to_json_string())
  (tmp_path / "empty.txt").write_text("")
  (tmp_path / "pairs.txt").write_text("one text\nand ||| its pair\n")
  bert_tf.save_checkpoint(bert_tf.BertEncoder(other),
                          str(tmp_path / "other.ckpt"))
  cases = {
      r"--layers=-3: layer -3 does not exist in a model of 2 layers": {
          "layers": "-3"},
      r"--layers=a: expected comma-separated layer indexes": {"layers": "a"},
      r"--input_file=.*missing.txt does not exist": {
          "input_file": tmp_path / "missing.txt"},
      r"--input_file=.*empty.txt is empty": {
          "input_file": tmp_path / "empty.txt"},
      r"other.ckpt.*(shape|another)": {
          "init_checkpoint": tmp_path / "other.ckpt"},
      r"--output_file=.*input.txt is the same file as --input_file": {
          "output_file": FLAGS["input_file"]},
      r"--input_file and --output_file are required": {"output_file": ""},
      r"--export_dir=.*input.txt is a file, not a directory": {
          "export_dir": FLAGS["input_file"]},
      # checked before the work, not [Errno 17] after it
      r"--export_dir=.*output.jsonl is where --output_file writes "
      r".*output.jsonl: one path cannot be a directory and a file": {
          "export_dir": tmp_path / "output.jsonl"},
      r"--export_dir=.*output.jsonl/export is inside .*output.jsonl, which "
      r"--output_file writes as a file": {
          "export_dir": tmp_path / "output.jsonl" / "export"},
      r"--max_seq_length=1: must be at least 2, room for \[CLS\] and "
      r"\[SEP\]": {"max_seq_length": 1},
      r"--max_seq_length=0: must be at least 2": {"max_seq_length": 0},
      r"--input_file=.*pairs.txt line 2: a pair needs --max_seq_length of at "
      r"least 3": {"input_file": tmp_path / "pairs.txt", "max_seq_length": 2},
  }
  outcomes = run_script_cases("extract_features.py", [
      {**FLAGS, "output_file": tmp_path / "output.jsonl", **case}
      for case in cases.values()])
  for expected, outcome in zip(cases, outcomes):
    assert_fails_in_one_line(outcome, "extract_features", expected)
  assert not (tmp_path / "output.jsonl").exists()
  with open(FLAGS["input_file"], encoding="utf-8") as reader:
    assert len(reader.read().splitlines()) == 15


@pytest.mark.shared
def test_the_export_serves_the_layers_of_ids_and_of_text(outputs):
  """serve_text and serve_text_pair: the JSONL's tokens and layers for the
  file's lines (split at " ||| " by the client), and the sentence vector:
  the mean over the tokens of the last layers (here both)."""
  assert sorted(os.listdir(outputs / "export")) == ["1", "2"]
  lines = read_jsonl(outputs / "output.jsonl")
  with open(FLAGS["input_file"], encoding="utf-8") as reader:
    texts = [line.strip() for line in reader.read().split("\n")][:15]
  single = [row for row, text in enumerate(texts) if " ||| " not in text]
  pairs = [row for row in range(len(texts)) if row not in single]
  ids = encode_texts(
      tokenization.FullTokenizer(FLAGS["vocab_file"], True),
      [texts[row] for row in single], max_seq_length=16)
  signatures, served = serve_as_documented(outputs / "export" / "2", {
      "serving_default": ids,
      "serve_text": {"text_a": [texts[row] for row in single]},
      "serve_text_pair": {
          "text_a": [texts[row].rpartition(" ||| ")[0] for row in pairs],
          "text_b": [texts[row].rpartition(" ||| ")[2] for row in pairs]}},
      outputs, "features")
  assert signatures == ["serve_text", "serve_text_pair", "serving_default"]
  # From ids, the same as from text (at a width of max_seq_length).
  for name in ("layers", "sentence_vector"):
    width = np.array(served["serve_text"][name]).shape[1:]
    np.testing.assert_allclose(
        np.array(served["serving_default"][name])[
            (slice(None),) + tuple(map(slice, width))],
        served["serve_text"][name], atol=1e-5)
  for name, rows in (("serve_text", single), ("serve_text_pair", pairs)):
    answer = served[name]
    for index, row in enumerate(rows):
      features = lines[row]["features"]
      count = len(features)
      assert sum(answer["input_mask"][index]) == count
      assert answer["tokens"][index][:count] == [
          feature["token"] for feature in features]
      values = np.array([[layer["values"] for layer in feature["layers"]]
                         for feature in features])
      layers = np.array(answer["layers"][index])[:count]
      np.testing.assert_allclose(layers, values, atol=1e-5)
      np.testing.assert_allclose(answer["sentence_vector"][index],
                                 values.mean(axis=(0, 1)), atol=1e-5)


# absl's flag listing: the same on every TensorFlow; one leg of CI runs it.
@pytest.mark.rerun
def test_help_lists_the_original_flags_and_no_training_ones():
  help_text = assert_help_lists("extract_features.py", (
      "input_file", "output_file", "layers", "bert_config_file",
      "max_seq_length", "init_checkpoint", "vocab_file", "do_lower_case",
      "batch_size", "use_tpu", "master", "num_tpu_cores",
      "use_one_hot_embeddings", "distribution_strategy", "use_xla", "dtype",
      "output_format", "export_dir", "export_signatures", "pooling",
      "normalize", "truncate_dim", "precision", "beam_runner",
      "output_dir", "num_workers"))
  for name in ("do_train", "learning_rate"):
    assert f"--{name}:" not in help_text and \
        f"--[no]{name}:" not in help_text, name
  assert "(default: '-1,-2,-3,-4')" in help_text
