"""save_pretrained(format="sentence-transformers") writes the folder
sentence-transformers 6 writes: the same files with the same settings and
weights as its own save of the model (the fixtures in
tests/fixtures/sentence_transformers, written by its save), its modules
named by the classic types that versions 5 and 6 both read, which bert_tf
then reads back with the same outputs. (That sentence-transformers 5 and 6
load these folders with the same embeddings is checked with them installed
by tests/fixtures/sentence_transformers/check_saved_folders.py.)"""

import json
import os

import numpy as np
import pytest
from safetensors.numpy import load_file

import bert_tf
from tests.support.helpers import PROJECT_DIR

FIXTURES = os.path.join(PROJECT_DIR, "tests", "fixtures",
                        "sentence_transformers")
# sentence-transformers' own saves (the classic folders' files were
# rewritten as the Hub has them, so they are not compared file by file).
ITS_OWN_SAVES = ("today_mean", "today_max", "today_mean_sqrt_len",
                 "today_weightedmean", "today_include_prompt",
                 "cross_encoder", "cross_encoder_identity", "cross_encoder_nli")
# JSON files of a folder's modules and settings.
SETTINGS_FILES = ("modules.json", "sentence_bert_config.json",
                  "config_sentence_transformers.json", "1_Pooling/config.json",
                  "2_Dense/config.json", "2_Normalize/config.json")


# The module types written: the classic ones, which sentence-transformers
# 5 and 6 both map to their modules (6 saves its own paths, which 5 lacks).
CLASSIC_TYPES = {"Transformer": "sentence_transformers.models.Transformer",
                 "Pooling": "sentence_transformers.models.Pooling",
                 "Dense": "sentence_transformers.models.Dense",
                 "Normalize": "sentence_transformers.models.Normalize"}


def _json(path):
  with open(path, encoding="utf-8") as reader:
    values = json.load(reader)
  if isinstance(values, dict):
    values.pop("__version__", None)  # the writing libraries' versions
  return values


def _by_kind(modules):
  """modules.json with each type as its class name."""
  return [{**module, "type": module["type"].rsplit(".", 1)[1]}
          for module in modules]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
  """{fixture folder: the folder bert_tf saves of what it loaded}."""
  target = tmp_path_factory.mktemp("saved")
  folders = {}
  for name in (*ITS_OWN_SAVES, "classic_cls_dense", "cross_encoder_v4"):
    model = bert_tf.load_pretrained(os.path.join(FIXTURES, name)).model
    folders[name] = str(target / name)
    model.save_pretrained(folders[name], format="sentence-transformers")
  return folders


@pytest.mark.parametrize("name", ITS_OWN_SAVES)
def test_the_settings_files_are_sentence_transformers_own(saved, name):
  theirs = os.path.join(FIXTURES, name)
  for relative in SETTINGS_FILES:
    if os.path.exists(os.path.join(theirs, relative)):
      ours, expected = (_json(os.path.join(folder, relative))
                        for folder in (saved[name], theirs))
      if relative == "modules.json":
        ours, expected = _by_kind(ours), _by_kind(expected)
      assert ours == expected, relative
  max_length = _json(os.path.join(theirs, "tokenizer_config.json"))[
      "model_max_length"]
  assert _json(os.path.join(saved[name], "tokenizer_config.json"))[
      "model_max_length"] == max_length


@pytest.mark.parametrize("name", ["today_mean_sqrt_len", "cross_encoder_nli"])
def test_the_weights_are_sentence_transformers_own(saved, name):
  for relative in ("model.safetensors", "2_Dense/model.safetensors"):
    theirs = os.path.join(FIXTURES, name, relative)
    if os.path.exists(theirs):
      ours, expected = load_file(os.path.join(saved[name], relative)), \
          load_file(theirs)
      assert sorted(ours) == sorted(expected), relative
      for key, value in expected.items():
        np.testing.assert_array_equal(ours[key], value, err_msg=key)


@pytest.mark.parametrize("name", ["classic_cls_dense", "today_mean",
                                  "today_mean_sqrt_len"])
def test_a_saved_embedder_reads_back_with_the_same_embeddings(saved, name):
  expected = np.load(os.path.join(FIXTURES, name, "expected.npz"))
  embedder = bert_tf.load_pretrained(saved[name]).model
  np.testing.assert_allclose(embedder.encode(expected["texts"].tolist()),
                             expected["embeddings"], atol=1e-5)


def test_a_classic_folder_is_saved_in_todays_layout(saved):
  pooling = _json(os.path.join(saved["classic_cls_dense"], "1_Pooling",
                               "config.json"))
  assert pooling == {"embedding_dimension": 32, "pooling_mode": "cls",
                     "include_prompt": True}
  # Its max length, from sentence_bert_config.json, is now
  # tokenizer_config.json's.
  assert _json(os.path.join(saved["classic_cls_dense"],
                            "tokenizer_config.json"))["model_max_length"] == 16


@pytest.mark.parametrize("name, kinds", [
    ("classic_cls_dense", ["Transformer", "Pooling", "Dense", "Normalize"]),
    ("today_mean", ["Transformer", "Pooling", "Normalize"]),
    ("cross_encoder", ["Transformer"])])
def test_the_module_types_are_the_classic_ones(saved, name, kinds):
  modules = _json(os.path.join(saved[name], "modules.json"))
  assert [module["type"] for module in modules] == [
      CLASSIC_TYPES[kind] for kind in kinds]


def test_a_hub_cross_encoder_is_saved_as_sentence_transformers_6_saves_one(
    saved):
  expected = np.load(os.path.join(FIXTURES, "cross_encoder_v4",
                                  "expected.npz"))
  model_config = _json(os.path.join(saved["cross_encoder_v4"],
                                    "config_sentence_transformers.json"))
  assert model_config["model_type"] == "CrossEncoder"
  assert model_config["activation_fn"] == \
      "torch.nn.modules.activation.Sigmoid"
  model = bert_tf.load_pretrained(saved["cross_encoder_v4"]).model
  scores = model.predict((expected["firsts"].tolist(),
                          expected["seconds"].tolist()), verbose=0)["scores"]
  np.testing.assert_allclose(scores, expected["scores"], atol=1e-5)


def test_an_embedder_saves_in_no_other_format(saved, tmp_path):
  embedder = bert_tf.load_pretrained(saved["today_max"]).model
  for output_format in ("huggingface", "original"):
    with pytest.raises(ValueError, match="would leave out its pooling"):
      embedder.save_pretrained(str(tmp_path / output_format),
                               format=output_format)
  encoder = bert_tf.load_pretrained(saved["today_max"],
                                    bert_tf.BertEncoder).model
  with pytest.raises(ValueError, match="for embedders, sparse encoders "
                     "and cross-encoders"):
    encoder.save_pretrained(str(tmp_path / "encoder"),
                            format="sentence-transformers")
  assert not os.listdir(tmp_path)
