"""run_scripts/convert_checkpoint.py: either format in, either out, and bad
input refused in one line with nothing written."""

import fcntl
import json
import os
import shutil
import subprocess
import sys
import uuid

import numpy as np
import pytest
import tensorflow as tf
from safetensors.numpy import load_file

from bert_tf.checkpoints import conversion
from bert_tf.checkpoints.original import checkpoint_writer
from tests.support.helpers import (PROJECT_DIR, SHARED_DIR,
                                   assert_fails_in_one_line, assert_help_lists,
                                   run_on_a_full_disk, run_script_cases)

COMMUNITY = os.path.join(PROJECT_DIR, "tests", "fixtures",
                         "community_checkpoint", "biobert_style")
HUGGINGFACE_DIR = os.path.join(SHARED_DIR, "reference", "huggingface")
EMBEDDER = os.path.join(PROJECT_DIR, "tests", "fixtures",
                        "sentence_transformers", "today_mean_sqrt_len")
pytestmark = pytest.mark.shared


def test_a_community_checkpoint_becomes_a_clean_release_and_a_folder(
    tmp_path):
  """Its optimizer slots and global_step stay behind; its 17-field config
  goes along byte for byte; the folder is transformers' BertForPreTraining,
  and --dtype=float16 halves it."""
  outcomes = run_script_cases("convert_checkpoint.py", [
      {"input_dir": COMMUNITY, "output_dir": tmp_path / "original",
       "output_format": "original"},
      {"input_dir": COMMUNITY, "output_dir": tmp_path / "hf",
       "output_format": "huggingface"},
      {"input_dir": COMMUNITY, "output_dir": tmp_path / "half",
       "output_format": "huggingface", "dtype": "float16"}])
  assert outcomes == [(0, ""), (0, ""), (0, "")]
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
  assert {value.dtype for value in load_file(
      tmp_path / "half" / "model.safetensors").values()} == {
      np.dtype(np.float16)}


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
  checkpoint_writer.write_checkpoint(str(directory / "model.ckpt-7"), tensors)
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


# Refused before any work, in one line: Python's checks, the same on every
# TensorFlow (a damaged checkpoint's TensorFlow error is
# tests/checkpoints/original/test_tf_checkpoints.py's); one leg of CI runs it.
@pytest.mark.rerun
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
      ({"input_dir": EMBEDDER, "output_dir": tmp_path / "out",
        "output_format": "original"},
       r"today_mean_sqrt_len: a sentence-transformers embedder; an "
       r"original-format checkpoint has no place for its modules \(Pooling, "
       r"Dense\), which would be lost: --output_format=huggingface keeps "
       r"them"),
  ]
  outcomes = run_script_cases("convert_checkpoint.py",
                              [flags for flags, _ in cases])
  for outcome, (_, expected) in zip(outcomes, cases):
    assert_fails_in_one_line(outcome, "convert_checkpoint", expected)
  assert sorted(os.listdir(taken)) == ["bert_model.ckpt.index"]
  assert not (tmp_path / "out").exists()
  assert [name for name in os.listdir(tmp_path) if ".tmp-" in name] == []


def test_an_embedder_folder_keeps_its_modules(tmp_path):
  """Its Pooling and Dense modules, written as save_pretrained writes
  them, give its embeddings (tests/checkpoints/test_conversion.py)."""
  outcomes = run_script_cases("convert_checkpoint.py", [
      {"input_dir": EMBEDDER, "output_dir": tmp_path / "out",
       "output_format": "huggingface"}])
  assert outcomes == [(0, "")], outcomes
  modules = json.load(open(tmp_path / "out" / "modules.json"))
  assert [module["path"] for module in modules] == ["", "1_Pooling",
                                                     "2_Dense"]
  assert os.path.exists(tmp_path / "out" / "2_Dense" / "model.safetensors")


# Where a conversion may write: Python's checks, the same on every
# TensorFlow; one leg of CI runs it.
@pytest.mark.rerun
def test_output_dir_forms_are_checked_before_any_work(tmp_path):
  """A symlink is written through to the directory it points to, which
  must be empty, and stays a link; a dangling one's target is made. An
  empty flag, and a path under a file, are refused before any work."""
  (tmp_path / "empty").mkdir()
  (tmp_path / "to_empty").symlink_to(tmp_path / "empty")
  (tmp_path / "dangling").symlink_to(tmp_path / "made" / "model")
  (tmp_path / "full").mkdir()
  (tmp_path / "full" / "notes.txt").write_text("the user's")
  (tmp_path / "to_full").symlink_to(tmp_path / "full")
  (tmp_path / "notes.txt").write_text("the user's")
  outcomes = run_script_cases("convert_checkpoint.py", [
      {"input_dir": COMMUNITY, "output_format": "huggingface",
       "output_dir": output_dir}
      for output_dir in (tmp_path / "to_empty", tmp_path / "dangling",
                         tmp_path / "to_full", "", tmp_path / "notes.txt" /
                         "model")])
  assert outcomes[:2] == [(0, ""), (0, "")], outcomes
  for link, target in (("to_empty", "empty"), ("dangling", "made/model")):
    assert (tmp_path / link).is_symlink()
    assert sorted(os.listdir(tmp_path / target)) == [
        "config.json", "model.safetensors", "tokenizer_config.json",
        "vocab.txt"]
  for outcome, expected in zip(outcomes[2:], (
      r"--output_dir=.*to_full already holds notes.txt",
      r"--output_dir is empty",
      r"--output_dir=.*notes.txt/model: .*notes.txt is a file, not a "
      r"directory")):
    assert_fails_in_one_line(outcome, "convert_checkpoint", expected)
  assert os.listdir(tmp_path / "full") == ["notes.txt"]
  assert not [name for name in os.listdir(tmp_path) if ".tmp-" in name]
  here = os.path.basename(os.getcwd())
  assert not [name for name in os.listdir(os.path.dirname(os.getcwd()))
              if name.startswith(f"{here}.tmp-")]


# convert_checkpoint, stopped once the Hugging Face files are written in
# its temporary directory: it prints "written" and waits to be killed.
_CONVERT_AND_WAIT = """
import runpy, sys, time
sys.path.insert(0, {scripts!r})
from bert_tf.checkpoints import huggingface
write_folder_files = huggingface.write_folder_files

def write_and_wait(*args, **kwargs):
  write_folder_files(*args, **kwargs)
  print("written", flush=True)
  time.sleep(60)

huggingface.write_folder_files = write_and_wait
sys.argv = [{script!r}, *sys.argv[1:]]
runpy.run_path({script!r}, run_name="__main__")
"""


# What a killed or interrupted run leaves: Python's, the same on every
# TensorFlow; one leg of CI runs it.
@pytest.mark.rerun
def test_killed_conversions_leave_no_temporary_behind(tmp_path):
  """SIGTERM mid-way removes the temporary (one line, status 143). What
  kill -9 leaves (a temporary no one holds) is removed by the next
  conversion into that output, which keeps a temporary a live writer
  holds."""
  script = tmp_path / "convert_and_wait.py"
  script.write_text(_CONVERT_AND_WAIT.format(
      scripts=os.path.join(PROJECT_DIR, "run_scripts"),
      script=os.path.join(PROJECT_DIR, "run_scripts", "convert_checkpoint.py")))
  run = subprocess.Popen(
      [sys.executable, str(script), f"--input_dir={COMMUNITY}",
       f"--output_dir={tmp_path / 'model'}", "--output_format=huggingface"],
      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
  assert run.stdout.readline() == "written\n", run.communicate()[1][-3000:]
  assert [name for name in os.listdir(tmp_path) if ".tmp-" in name]
  run.terminate()
  _, stderr = run.communicate(timeout=60)
  assert run.returncode == 143, stderr[-3000:]
  assert stderr.splitlines()[-1] == (
      "convert_checkpoint: terminated; no output was half written")
  assert sorted(os.listdir(tmp_path)) == ["convert_and_wait.py"]
  killed, held = (tmp_path / f"model.tmp-{uuid.uuid4().hex}"
                  for _ in range(2))
  for temporary in (killed, held):
    temporary.mkdir()
    (temporary / "model.safetensors").write_bytes(b"half written")
  writer = os.open(held, os.O_RDONLY)
  try:
    fcntl.flock(writer, fcntl.LOCK_EX)  # a live writer's
    conversion.convert(COMMUNITY, str(tmp_path / "model"),
                       conversion.HUGGINGFACE)
  finally:
    os.close(writer)
  assert sorted(os.listdir(tmp_path)) == sorted(
      ["convert_and_wait.py", "model", held.name])
  assert os.path.getsize(tmp_path / "model" / "model.safetensors") > 1000


# Python's error path, the same on every TensorFlow: one leg of CI runs it.
@pytest.mark.rerun
def test_a_full_disk_in_safetensors_is_one_line(tmp_path):
  disk = tmp_path / "disk"
  disk.mkdir()
  result = run_on_a_full_disk("convert_checkpoint.py", {
      "input_dir": COMMUNITY, "output_dir": disk / "model",
      "output_format": conversion.HUGGINGFACE}, disk)
  assert (result.returncode, result.stderr.strip().splitlines()[-1]) == (
      1, f"convert_checkpoint: no space left on device writing {disk}/model;"
         f" no output was half written"), result.stderr[-3000:]
  assert "Traceback" not in result.stderr


# absl's flag listing: the same on every TensorFlow; one leg of CI runs it.
@pytest.mark.rerun
def test_help_lists_the_flags():
  assert_help_lists("convert_checkpoint.py", [
      "input_dir", "output_dir", "output_format", "architecture",
      "do_lower_case", "dtype"])
