"""Every head of a Hugging Face folder opens with its labels in the folder's
order and its problem_type, against transformers' own outputs
(tests/fixtures/huggingface/make_heads.py wrote the folders), and keeps
them through conversion both ways."""

import json
import logging
import os
import shutil

import keras
import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

import bert_tf
from bert_tf.checkpoints import conversion
from bert_tf.checkpoints.huggingface.config import read_config
from bert_tf.checkpoints.huggingface.reader import HuggingFaceFolder
from bert_tf.checkpoints import loading
from bert_tf.checkpoints.names import labels_fields, labels_of_fields
from bert_tf.config import BertConfig
from bert_tf.models import BertNextSentenceClassifier
from bert_tf.tasks.ner import examples as conll
from bert_tf.tasks.ner.task import NerTask
from tests.support.helpers import PROJECT_DIR, SHARED_DIR

FIXTURES = os.path.join(PROJECT_DIR, "tests", "fixtures", "huggingface")
# folder: (bert_tf class, labels in the folder's id2label order,
# problem_type)
HEADS = {
    "bert_for_next_sentence_prediction": (
        BertNextSentenceClassifier, ["LABEL_0", "LABEL_1"], None),
    "bert_for_token_classification_drug": (
        bert_tf.BertTagger, ["O", "B-DRUG", "I-DRUG", "B-DOSE", "I-DOSE"],
        None),
    "bert_for_token_classification_default": (
        bert_tf.BertTagger, [f"LABEL_{index}" for index in range(5)], None),
    "bert_for_multi_label": (
        bert_tf.BertClassifier, ["sport", "politics", "science", "art"],
        "multi_label_classification"),
    "bert_for_regression": (bert_tf.BertClassifier, ["LABEL_0"],
                            "regression"),
}
CONLL_FOLDER = os.path.join(SHARED_DIR, "reference", "huggingface",
                            "bert_for_token_classification")


def fixture(name):
  return os.path.join(FIXTURES, name)


def run(model, expected):
  return model({"input_ids": expected["input_ids"],
                "input_mask": expected["attention_mask"],
                "segment_ids": expected["token_type_ids"]}, training=False)


def assert_close(ours, theirs):
  np.testing.assert_allclose(np.asarray(ours), theirs, rtol=0, atol=1e-5)


@pytest.mark.parametrize("name", HEADS)
def test_each_head_gives_transformers_outputs_in_the_folders_label_order(
    name):
  model_class, labels, problem_type = HEADS[name]
  pretrained = bert_tf.load_pretrained(fixture(name))
  assert type(pretrained.model) is model_class
  assert pretrained.labels == labels
  assert pretrained.load_report.unused == []
  assert getattr(pretrained.model, "problem_type", None) == problem_type
  expected = np.load(os.path.join(fixture(name), "expected.npz"))
  out = run(pretrained.model, expected)
  assert_close(out["logits"], expected["logits"])
  # transformers' own for multi-label (sigmoid) and regression; else the
  # softmax of its logits.
  key = "predictions" if problem_type == "regression" else "probabilities"
  assert sorted(out) == sorted(["logits", key])
  logits = expected["logits"]
  softmax = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
  assert_close(out[key], expected[key] if key in expected else softmax)
  if "pooler_output" in expected:
    assert_close(run(pretrained.model.encoder, expected)["pooled_output"],
                 expected["pooler_output"])


def test_a_multi_label_classifier_keeps_its_problem_type_in_a_keras_file(
    tmp_path):
  model = bert_tf.load_pretrained(fixture("bert_for_multi_label")).model
  path = str(tmp_path / "model.keras")
  model.save(path)
  loaded = keras.saving.load_model(path)
  assert loaded.problem_type == "multi_label_classification"
  expected = np.load(os.path.join(fixture("bert_for_multi_label"),
                                  "expected.npz"))
  assert_close(run(loaded, expected)["probabilities"],
               expected["probabilities"])


def fancy_folder(tmp_path):
  """The multi-label folder as a class bert_tf does not map, with a tensor
  of its own head."""
  target = tmp_path / "fancy"
  shutil.copytree(fixture("bert_for_multi_label"), target)
  values = json.load(open(target / "config.json"))
  values["architectures"] = ["BertForFancyThing"]
  (target / "config.json").write_text(json.dumps(values))
  tensors = load_file(target / "model.safetensors")
  tensors["fancy.weight"] = np.ones((3, 32), np.float32)
  save_file(tensors, target / "model.safetensors", metadata={"format": "pt"})
  return target


@pytest.mark.parametrize("name", ["bert_for_next_sentence_prediction",
                                  "fancy"])
def test_any_folder_gives_its_encoder(tmp_path, name):
  directory = fancy_folder(tmp_path) if name == "fancy" else fixture(name)
  pretrained = bert_tf.load_pretrained(str(directory), bert_tf.BertEncoder)
  assert type(pretrained.model) is bert_tf.BertEncoder
  assert len(pretrained.load_report.loaded) == 39  # 5 + 2 * 16 + pooler
  expected = np.load(os.path.join(directory, "expected.npz"))
  out = run(pretrained.model, expected)
  assert_close(out["sequence_output"], expected["hidden_states_2"])
  assert_close(out["pooled_output"], expected["pooler_output"])


def test_an_unmapped_head_alone_is_refused_in_one_line(tmp_path):
  directory = fancy_folder(tmp_path)
  message = (r"fancy: architecture 'BertForFancyThing' is not one bert_tf "
             r"maps .* load_pretrained\(folder, bert_tf.BertEncoder\)")
  with pytest.raises(ValueError, match=message) as raised:
    bert_tf.load_pretrained(str(directory))
  assert "\n" not in str(raised.value)
  with pytest.raises(ValueError, match=message):
    conversion.convert(str(directory), str(tmp_path / "out"),
                       conversion.ORIGINAL)
  assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", HEADS)
def test_labels_and_problem_type_survive_conversion_both_ways(tmp_path,
                                                              name,
                                                              caplog):
  original, back = tmp_path / "original", tmp_path / "back"
  conversion.convert(fixture(name), str(original), conversion.ORIGINAL)
  conversion.convert(str(original), str(back), conversion.HUGGINGFACE)
  theirs = json.load(open(os.path.join(fixture(name), "config.json")))
  ours = json.load(open(back / "config.json"))
  for key in ("architectures", "id2label", "label2id", "problem_type"):
    if key in theirs:  # (the next-sentence head's LABEL_i go unsaid)
      assert ours[key] == theirs[key], key
  read_back = HuggingFaceFolder(str(back))
  assert (read_back.labels, read_back.problem_type) == HEADS[name][1:]
  ours_tensors = load_file(back / "model.safetensors")
  theirs_tensors = load_file(os.path.join(fixture(name), "model.safetensors"))
  assert sorted(ours_tensors) == sorted(theirs_tensors)
  for key, value in theirs_tensors.items():
    np.testing.assert_array_equal(ours_tensors[key], value, err_msg=key)
  # The original's BertConfig.from_dict keeps every key as an attribute.
  values = json.load(open(original / "bert_config.json"))
  attributes = type("OriginalBertConfig", (), {})()
  for key, value in values.items():
    setattr(attributes, key, value)
  assert attributes.vocab_size == 144
  caplog.clear()
  with caplog.at_level(logging.WARNING):
    config = BertConfig.from_json_file(str(original / "bert_config.json"))
  assert not caplog.records
  assert labels_of_fields(config.extra_fields, "bert_config.json") == (
      HEADS[name][1], HEADS[name][2])


def test_labels_fields_are_read_back():
  fields = labels_fields(["0", "1"], "single_label_classification")
  assert fields == {"id2label": {"0": "0", "1": "1"},
                    "label2id": {"0": 0, "1": 1},
                    "problem_type": "single_label_classification"}
  assert labels_of_fields(fields, "x") == (["0", "1"],
                                            "single_label_classification")
  assert labels_of_fields({}, "x") == (None, None)
  with pytest.raises(ValueError, match=r"x: \"problem_type\" is 'ranking'"):
    labels_of_fields({"problem_type": "ranking"}, "x")


def ner_tagger():
  config = read_config(os.path.join(CONLL_FOLDER,
                                              "config.json"))
  return NerTask("unused").build_model(config)


@pytest.mark.shared
def test_run_ners_tagger_takes_a_conll_folders_rows_by_label_name():
  """The folder's id2label is CoNLL-2003's tags in transformers' order, not
  run_ner's."""
  model = ner_tagger()
  loading.load_checkpoint(model, CONLL_FOLDER)
  id2label = json.load(open(os.path.join(CONLL_FOLDER, "config.json")))[
      "id2label"]
  folder_labels = [id2label[str(index)] for index in range(len(id2label))]
  assert folder_labels != list(conll.LABELS)
  rows = [folder_labels.index(label) for label in conll.LABELS]
  tensors = load_file(os.path.join(CONLL_FOLDER, "model.safetensors"))
  np.testing.assert_array_equal(model.tag_head.output_weights.numpy(),
                                tensors["classifier.weight"][rows])
  np.testing.assert_array_equal(model.tag_head.output_bias.numpy(),
                                tensors["classifier.bias"][rows])


@pytest.mark.shared
def test_run_ners_tagger_takes_only_the_encoder_of_other_labels(caplog):
  model = ner_tagger()
  initial = model.tag_head.output_weights.numpy()
  with caplog.at_level(logging.WARNING):
    report = loading.load_checkpoint(
        model, fixture("bert_for_token_classification_drug"))
  assert report.not_in_checkpoint[-2:] == ["cls/ner/output_weights",
                                           "cls/ner/output_bias"]
  np.testing.assert_array_equal(model.tag_head.output_weights.numpy(),
                                initial)
  assert "['O', 'B-DRUG', 'I-DRUG', 'B-DOSE', 'I-DOSE'] are not the " \
      "model's ['O', 'B-PER'," in caplog.text


@pytest.mark.shared
def test_a_converted_conll_folder_keeps_mapping_rows_by_name(tmp_path):
  """Converted to the original format, the folder's labels are in its
  bert_config.json: run_ner's tagger still takes the rows by name."""
  conversion.convert(CONLL_FOLDER, str(tmp_path / "original"),
                     conversion.ORIGINAL)
  from_folder, converted = ner_tagger(), ner_tagger()
  loading.load_checkpoint(from_folder, CONLL_FOLDER)
  loading.load_checkpoint(converted, str(tmp_path / "original"))
  np.testing.assert_array_equal(converted.tag_head.output_weights.numpy(),
                                from_folder.tag_head.output_weights.numpy())
  np.testing.assert_array_equal(converted.tag_head.output_bias.numpy(),
                                from_folder.tag_head.output_bias.numpy())
