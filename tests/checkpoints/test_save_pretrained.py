"""save_pretrained on what a folder must keep and where it is written: a
cross-encoder's activation in every format, labels as strings, files as
readable as the umask allows, an existing directory (the working one
included) written in place, refusals naming the Python argument. (That
sentence-transformers loads what it writes with the same outputs is
checked by tests/fixtures/sentence_transformers/check_saved_folders.py.)"""

import json
import os
import stat

import pytest

import bert_tf
from tests.support.sentence_transformers_folders import (
    assert_as_sentence_transformers, expected, opener)


@pytest.fixture(scope="module", name="opened")
def opened_fixtures():
  return opener()


def _json(path):
  with open(path, encoding="utf-8") as reader:
    return json.load(reader)


@pytest.mark.parametrize("output_format, config_file", [
    ("huggingface", "config.json"), ("original", "bert_config.json")])
def test_a_cross_encoder_keeps_its_activation(opened, tmp_path,
                                              output_format, config_file):
  """Identity here, where sentence-transformers' default for one label is
  Sigmoid."""
  model = opened("cross_encoder_identity").model
  model.save_pretrained(tmp_path / "out", format=output_format)
  assert _json(tmp_path / "out" / config_file)["sentence_transformers"] == {
      "activation_fn": "torch.nn.modules.linear.Identity"}
  reloaded = bert_tf.BertClassifier.from_pretrained(
      str(tmp_path / "out"), max_seq_length=model.preprocessor.max_seq_length)
  assert reloaded.score_activation == "linear"
  values = expected("cross_encoder_identity")
  assert_as_sentence_transformers(
      reloaded((values["firsts"], values["seconds"]))["scores"],
      values["scores"])


def test_a_plain_classifier_records_no_activation(opened, tmp_path):
  config = opened("cross_encoder_nli").config
  bert_tf.BertClassifier(config, 3).save_pretrained(
      tmp_path / "out", vocab_file=opened("cross_encoder_nli").vocab_file)
  assert "sentence_transformers" not in _json(tmp_path / "out" /
                                              "config.json")
  assert bert_tf.load_pretrained(
      str(tmp_path / "out")).model.score_activation is None


def test_labels_are_written_as_strings_and_read_back(opened, tmp_path):
  """labels=[0, 1]: config.json's id2label names them "0" and "1", as
  transformers writes labels, which bert_tf's loader reads."""
  model = bert_tf.BertClassifier(opened("cross_encoder").config, 2,
                                 labels=[0, 1])
  model.save_pretrained(tmp_path / "out",
                        vocab_file=opened("cross_encoder").vocab_file)
  config = _json(tmp_path / "out" / "config.json")
  assert (config["id2label"], config["label2id"]) == (
      {"0": "0", "1": "1"}, {"0": 0, "1": 1})
  assert bert_tf.load_pretrained(str(tmp_path / "out")).labels == ["0", "1"]


@pytest.mark.parametrize("labels, message", [
    (["pos", "pos"], "labels name 'pos' twice; each of the head's rows has "
                     "a label of its own"),
    ([1, "1"], "labels name '1' twice"),
    ("ab", "labels='ab'; expected a list of the head's 2 labels")])
def test_labels_that_name_no_row_each_are_refused(opened, labels, message):
  with pytest.raises(ValueError, match=f"^BertClassifier: {message}"):
    bert_tf.BertClassifier(opened("cross_encoder").config, 2, labels=labels)


@pytest.mark.parametrize("output_format", ["huggingface", "original",
                                          "sentence-transformers"])
def test_every_file_written_has_the_umask_s_mode(opened, tmp_path,
                                                 output_format):
  """model.safetensors too, whose writer makes 0600 files."""
  name = "today_mean_sqrt_len" if output_format == \
      "sentence-transformers" else "cross_encoder"  # with a Dense module
  previous = os.umask(0o027)
  try:
    opened(name).model.save_pretrained(tmp_path / "out", format=output_format)
  finally:
    os.umask(previous)
  modes = {os.path.relpath(os.path.join(root, name), tmp_path / "out"):
           stat.S_IMODE(os.stat(os.path.join(root, name)).st_mode)
           for root, _, names in os.walk(tmp_path / "out") for name in names}
  assert len(modes) >= 4
  assert modes == dict.fromkeys(modes, 0o640)


def test_the_working_directory_is_written_in_place(opened, tmp_path,
                                                   monkeypatch):
  """save_pretrained(".") from inside an empty directory: it stays the
  working directory, and holds the model."""
  (tmp_path / "model").mkdir()
  monkeypatch.chdir(tmp_path / "model")
  inode = os.stat(".").st_ino
  opened("cross_encoder").model.save_pretrained(".")
  assert os.stat(os.getcwd()).st_ino == os.stat(".").st_ino == inode
  assert sorted(os.listdir(".")) == [
      "config.json", "model.safetensors", "tokenizer.json",
      "tokenizer_config.json"]
  assert os.listdir(tmp_path) == ["model"]
  assert bert_tf.load_pretrained(".").model.score_activation == "sigmoid"


def test_refusals_name_the_python_argument(opened, tmp_path):
  (tmp_path / "taken").mkdir()
  (tmp_path / "taken" / "notes.txt").write_text("the user's")
  (tmp_path / "file").write_text("the user's")
  model = opened("cross_encoder").model
  for directory, message in (
      (tmp_path / "taken", "already holds notes.txt; a model directory is "
                           "written into a new or empty directory"),
      (tmp_path / "file", "is a file, not a directory"),
      ("", "is empty: it must name a path")):
    with pytest.raises(ValueError) as raised:
      model.save_pretrained(directory)
    line = str(raised.value)
    assert line.startswith("BertClassifier.save_pretrained: directory")
    assert message in line and "--" not in line, line
