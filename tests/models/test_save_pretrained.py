"""BertKerasModel.save_pretrained: a model written as the folder
convert_checkpoint would write from its checkpoint, in either format."""

import glob
import json
import os

import keras
import numpy as np
import pytest
from safetensors.numpy import load_file

from bert_tf.checkpoints import conversion, huggingface, names
from bert_tf.checkpoints.model_weights import load_weights
from bert_tf.models import BertClassifier, BertPretrainer
from bert_tf.models.load_pretrained import MODEL_CLASSES, load_pretrained
from bert_tf.text.preprocessor import BertPreprocessor
from tests.support.helpers import PROJECT_DIR, SHARED_DIR, random_inputs

FIXTURES = os.path.join(PROJECT_DIR, "tests", "fixtures", "huggingface")
REFERENCE = os.path.join(SHARED_DIR, "reference", "huggingface")
# Folders transformers wrote, each of one class and head.
FOLDERS = sorted(glob.glob(os.path.join(REFERENCE, "*"))) + sorted(
    glob.glob(os.path.join(FIXTURES, "bert_for_*")))
SEQUENCE_CLASSIFICATION = os.path.join(REFERENCE,
                                       "bert_for_sequence_classification")
VOCAB_FILE = os.path.join(SEQUENCE_CLASSIFICATION, "vocab.txt")
TOKENIZER_FOLDER = os.path.join(FIXTURES, "transformers5_classifier")


def _read_json(path):
  with open(path, encoding="utf-8") as reader:
    return json.load(reader)


def _opened(folder):
  """(model, vocab_file, architecture) of a folder; one without a
  vocabulary (bert_for_masked_lm) takes the references' (the same)."""
  architecture = _read_json(os.path.join(folder, "config.json"))[
      "architectures"][0]
  if os.path.exists(os.path.join(folder, "vocab.txt")):
    pretrained = load_pretrained(folder)
    return pretrained.model, pretrained.vocab_file, architecture
  source = conversion.open_model_directory(folder, needs_vocab=False)
  model = BertPretrainer(source.config)
  load_weights(model, source.reader, source.path)
  return model, VOCAB_FILE, architecture


def _outputs(model):
  """The model's outputs on fixed inputs, as numpy arrays."""
  inputs = random_inputs(model.config)
  if model.input_ranks["input_ids"] == 3:  # two endings per example
    inputs = {name: np.stack([value, value[::-1]], axis=1)
              for name, value in inputs.items()}
  inputs = {name: value for name, value in inputs.items()
            if name in model.input_ranks}
  outputs = keras.tree.flatten(model(inputs, training=False))
  return [keras.ops.convert_to_numpy(value) for value in outputs]


def _assert_same_outputs(model, other):
  for ours, theirs in zip(_outputs(model), _outputs(other), strict=True):
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("folder", FOLDERS, ids=os.path.basename)
def test_a_folder_comes_back_as_transformers_wrote_it(folder, tmp_path):
  model, vocab_file, architecture = _opened(folder)
  model.save_pretrained(tmp_path / "out", vocab_file=vocab_file,
                        architecture=architecture)
  theirs = _read_json(os.path.join(folder, "config.json"))
  if architecture in huggingface.LABELLED_ARCHITECTURES and \
      "id2label" not in theirs:  # transformers' default, which ours spells
    theirs.update(names.labels_fields(huggingface.default_labels(
        architecture, 2)))
  ours = _read_json(tmp_path / "out" / "config.json")
  assert ours == {name: theirs.get(name) for name in ours}
  label_fields = ("architectures", "id2label", "label2id", "problem_type")
  assert {name for name in label_fields if name in theirs} <= set(ours)
  stored = load_file(os.path.join(folder, "model.safetensors"))
  written = load_file(tmp_path / "out" / "model.safetensors")
  assert sorted(written) == sorted(stored)
  for name, value in stored.items():
    assert written[name].dtype == value.dtype, name
    np.testing.assert_array_equal(written[name], value, err_msg=name)
  if architecture in MODEL_CLASSES and os.path.exists(
      os.path.join(folder, "vocab.txt")):
    _assert_same_outputs(model, load_pretrained(tmp_path / "out").model)


@pytest.mark.parametrize("folder", [
    SEQUENCE_CLASSIFICATION, os.path.join(FIXTURES, "bert_for_multi_label"),
    os.path.join(FIXTURES, "bert_for_token_classification_drug")],
                         ids=os.path.basename)
def test_original_format_keeps_outputs_and_labels(folder, tmp_path):
  pretrained = load_pretrained(folder)
  pretrained.model.save_pretrained(tmp_path / "out", "original",
                                   vocab_file=pretrained.vocab_file)
  assert sorted(os.listdir(tmp_path / "out")) == [
      "bert_config.json", "bert_model.ckpt.data-00000-of-00001",
      "bert_model.ckpt.index", "vocab.txt"]
  config = _read_json(tmp_path / "out" / "bert_config.json")
  labels, problem_type = names.labels_of_fields(config, "bert_config.json")
  assert labels == pretrained.labels
  assert problem_type == getattr(pretrained.model, "problem_type", None)
  reopened = load_pretrained(tmp_path / "out")
  assert reopened.labels == pretrained.labels
  _assert_same_outputs(pretrained.model, reopened.model)


@pytest.mark.parametrize("vocab_file", [
    VOCAB_FILE, os.path.join(TOKENIZER_FOLDER, "tokenizer.json")],
                         ids=["vocab.txt", "tokenizer.json"])
def test_a_keras_file_writes_its_own_vocabulary_and_labels(vocab_file,
                                                           tmp_path):
  pretrained = load_pretrained(SEQUENCE_CLASSIFICATION)
  model = BertClassifier(
      pretrained.config, 2, labels=["negative", "positive"],
      preprocessor=BertPreprocessor(vocab_file, pretrained.do_lower_case, 16))
  model.save(tmp_path / "model.keras")
  loaded = keras.saving.load_model(tmp_path / "model.keras")
  assert loaded.labels == ["negative", "positive"]
  loaded.save_pretrained(tmp_path / "out")
  name = os.path.basename(vocab_file)
  with open(vocab_file, "rb") as source, \
      open(tmp_path / "out" / name, "rb") as written:
    assert written.read() == source.read()
  config = _read_json(tmp_path / "out" / "config.json")
  assert config["id2label"] == {"0": "negative", "1": "positive"}
  reopened = load_pretrained(tmp_path / "out")
  assert reopened.labels == ["negative", "positive"]
  assert reopened.model.labels == ["negative", "positive"]
  assert reopened.do_lower_case == pretrained.do_lower_case


def test_a_classifier_without_labels_writes_label_i(tmp_path):
  model = BertClassifier(load_pretrained(SEQUENCE_CLASSIFICATION).config, 3)
  model.save_pretrained(tmp_path / "out", "original", vocab_file=VOCAB_FILE)
  config = _read_json(tmp_path / "out" / "bert_config.json")
  assert config["id2label"] == {str(index): f"LABEL_{index}"
                                for index in range(3)}


def test_each_class_saves_as_the_classes_it_loads_from():
  for architecture, model_class in MODEL_CLASSES.items():
    assert architecture in model_class.huggingface_architectures
    assert architecture in huggingface.ARCHITECTURES
    default = model_class.huggingface_architectures[0]
    assert MODEL_CLASSES[default] is model_class


def test_refusals_are_one_line(tmp_path):
  pretrained = load_pretrained(SEQUENCE_CLASSIFICATION)
  model = pretrained.model
  (tmp_path / "taken").mkdir()
  (tmp_path / "taken" / "notes.txt").write_text("the user's")
  with_preprocessor = BertClassifier(
      pretrained.config, 2, preprocessor=pretrained.preprocessor(16))
  for call, expected in [
      (lambda: model.save_pretrained(tmp_path / "out"),
       "has no vocabulary .*: pass vocab_file="),
      (lambda: model.save_pretrained(tmp_path / "taken",
                                     vocab_file=VOCAB_FILE),
       "already holds notes.txt"),
      (lambda: model.save_pretrained(tmp_path / "out", "onnx"),
       "format='onnx'"),
      (lambda: model.save_pretrained(tmp_path / "out", vocab_file=VOCAB_FILE,
                                     architecture="BertForMaskedLM"),
       "architecture='BertForMaskedLM'; expected one of "
       "BertForSequenceClassification"),
      (lambda: with_preprocessor.save_pretrained(tmp_path / "out",
                                                 vocab_file=VOCAB_FILE),
       "whose preprocessor holds its vocabulary")]:
    with pytest.raises(ValueError, match=expected) as raised:
      call()
    assert "\n" not in str(raised.value)
  assert not (tmp_path / "out").exists()
  assert os.listdir(tmp_path / "taken") == ["notes.txt"]
