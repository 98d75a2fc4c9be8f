"""run_scripts/convert_checkpoint.py: either format in, either out, and bad
input refused in one line with nothing written."""

import json
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf
from safetensors.numpy import load_file

from bert_tf import checkpoints, conversion
from tests.support.helpers import (PROJECT_DIR, SHARED_DIR,
                                   assert_fails_in_one_line, assert_help_lists,
                                   run_script_cases)

COMMUNITY = os.path.join(PROJECT_DIR, "tests", "fixtures",
                         "community_checkpoint", "biobert_style")
HUGGINGFACE_DIR = os.path.join(SHARED_DIR, "reference", "huggingface")
pytestmark = pytest.mark.shared


def test_a_community_checkpoint_becomes_a_clean_release_and_a_folder(
    tmp_path):
  """Its optimizer slots and global_step stay behind; its 17-field config
  goes along byte for byte; the folder is transformers' BertForPreTraining."""
  outcomes = run_script_cases("convert_checkpoint.py", [
      {"input_dir": COMMUNITY, "output_dir": tmp_path / "original",
       "output_format": "original"},
      {"input_dir": COMMUNITY, "output_dir": tmp_path / "hf",
       "output_format": "huggingface"}])
  assert outcomes == [(0, ""), (0, "")]
  prefix = str(tmp_path / "original" / "bert_model.ckpt")
  shapes = tf.train.load_checkpoint(prefix).get_variable_to_shape_map()
  stored = tf.train.load_checkpoint(f"{COMMUNITY}/model.ckpt-5")
  assert sorted(shapes) == sorted(
      name for name in stored.get_variable_to_shape_map()
      if not name.endswith(("adam_m", "adam_v")))
  reader = tf.train.load_checkpoint(prefix)
  assert reader.get_tensor("global_step") == 0
  for name in shapes:
    if name != "global_step":
      np.testing.assert_array_equal(reader.get_tensor(name),
                                    stored.get_tensor(name))
  assert (tmp_path / "original" / "bert_config.json").read_bytes() == \
      open(f"{COMMUNITY}/bert_config.json", "rb").read()
  config = json.load(open(tmp_path / "hf" / "config.json"))
  assert config["architectures"] == ["BertForPreTraining"]
  assert config["hidden_act"] == "gelu_new"  # the original's tanh GELU
  assert len(load_file(tmp_path / "hf" / "model.safetensors")) == 46


def classifier_checkpoint(tmp_path, rows):
  """An original-format run_classifier/run_swag output: the encoder of
  original_tiny's layout plus output_weights with `rows` rows."""
  source = os.path.join(HUGGINGFACE_DIR, "bert_for_pretraining")
  encoder = tmp_path / f"encoder_{rows}"
  conversion.convert(source, str(encoder), conversion.ORIGINAL)
  prefix = str(encoder / "bert_model.ckpt")
  reader = tf.train.load_checkpoint(prefix)
  tensors = {name: reader.get_tensor(name)
             for name in reader.get_variable_to_shape_map()
             if not name.startswith("cls/")}
  tensors["output_weights"] = np.ones((rows, 32), np.float32)
  tensors["output_bias"] = np.zeros((rows,), np.float32)
  directory = tmp_path / f"classifier_{rows}"
  directory.mkdir()
  checkpoints.write_checkpoint(str(directory / "model.ckpt-7"), tensors)
  for name in ("bert_config.json", "vocab.txt"):
    shutil.copy(encoder / name, directory)
  return directory


def test_a_one_logit_head_is_run_swags_unless_said_otherwise(tmp_path):
  one, three = classifier_checkpoint(tmp_path, 1), classifier_checkpoint(
      tmp_path, 3)
  outcomes = run_script_cases("convert_checkpoint.py", [
      {"input_dir": one, "output_dir": tmp_path / "swag",
       "output_format": "huggingface"},
      {"input_dir": one, "output_dir": tmp_path / "stsb",
       "output_format": "huggingface",
       "architecture": "BertForSequenceClassification"},
      {"input_dir": three, "output_dir": tmp_path / "mnli",
       "output_format": "huggingface"},
      {"input_dir": three, "output_dir": tmp_path / "wrong",
       "output_format": "huggingface", "architecture": "BertForPreTraining"},
  ])
  assert [code for code, _ in outcomes[:3]] == [0, 0, 0], outcomes
  written = {name: json.load(open(tmp_path / name / "config.json"))
             for name in ("swag", "stsb", "mnli")}
  assert written["swag"]["architectures"] == ["BertForMultipleChoice"]
  assert written["stsb"]["architectures"] == [
      "BertForSequenceClassification"]
  assert written["stsb"]["id2label"] == {"0": "LABEL_0"}
  assert written["mnli"]["id2label"] == {
      "0": "LABEL_0", "1": "LABEL_1", "2": "LABEL_2"}
  assert "bert.pooler.dense.weight" in load_file(
      tmp_path / "mnli" / "model.safetensors")
  assert_fails_in_one_line(outcomes[3], "convert_checkpoint",
                           r"model.ckpt-7: no variable cls/predictions/"
                           r"transform/dense/kernel, which BertForPreTraining "
                           r"has")
  assert not (tmp_path / "wrong").exists()


def test_question_answering_and_tagging_heads_leave_the_pooler(tmp_path):
  source = os.path.join(HUGGINGFACE_DIR, "bert_for_question_answering")
  conversion.convert(source, str(tmp_path / "original"), conversion.ORIGINAL)
  names = tf.train.load_checkpoint(str(
      tmp_path / "original" / "bert_model.ckpt")).get_variable_to_shape_map()
  assert "cls/squad/output_weights" in names
  assert not any(name.startswith("bert/pooler/") for name in names)


def test_bad_input_is_refused_in_one_line_and_nothing_is_written(tmp_path):
  taken = tmp_path / "taken"
  taken.mkdir()
  (taken / "bert_model.ckpt.index").write_bytes(b"")
  roberta = tmp_path / "roberta"
  shutil.copytree(os.path.join(HUGGINGFACE_DIR, "bert_for_pretraining"),
                  roberta)
  values = json.load(open(roberta / "config.json"))
  values["model_type"] = "roberta"
  (roberta / "config.json").write_text(json.dumps(values))
  truncated = tmp_path / "truncated"
  shutil.copytree(COMMUNITY, truncated)
  data = truncated / "model.ckpt-5.data-00000-of-00001"
  data.write_bytes(data.read_bytes()[:100000])
  source = os.path.join(HUGGINGFACE_DIR, "bert_for_pretraining")
  cases = [
      ({"input_dir": truncated, "output_dir": tmp_path / "out",
        "output_format": "huggingface"},
       r"truncated/model.ckpt-5: cannot read variable .*, the checkpoint's "
       r"data file is truncated or damaged"),
      ({"input_dir": source, "output_dir": taken,
        "output_format": "original"},
       r"--output_dir=.*taken already holds bert_model.ckpt.index"),
      ({"input_dir": roberta, "output_dir": tmp_path / "out",
        "output_format": "original"},
       r"roberta/config.json: model_type 'roberta' is not a BERT"),
      ({"input_dir": tmp_path, "output_dir": tmp_path / "out",
        "output_format": "original"},
       r"neither a Hugging Face folder \(config.json\) nor an "
       r"original-format one"),
      ({"input_dir": source, "output_dir": source + "/model.safetensors",
        "output_format": "original"},
       r"--output_dir=.*model.safetensors is a file, not a directory"),
  ]
  outcomes = run_script_cases("convert_checkpoint.py",
                              [flags for flags, _ in cases])
  for outcome, (_, expected) in zip(outcomes, cases):
    assert_fails_in_one_line(outcome, "convert_checkpoint", expected)
  assert sorted(os.listdir(taken)) == ["bert_model.ckpt.index"]
  assert not (tmp_path / "out").exists()
  assert [name for name in os.listdir(tmp_path) if ".tmp-" in name] == []


def test_help_lists_the_flags():
  assert_help_lists("convert_checkpoint.py", [
      "input_dir", "output_dir", "output_format", "architecture",
      "do_lower_case"])
