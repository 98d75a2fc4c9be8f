"""model.export to ONNX and LiteRT: each model's outputs as Keras computes
them (skips where tf2onnx/onnxruntime or ai-edge-litert is not installed:
pip install -e ".[export]"); a raw-text SavedModel's inputs named as the
runners' exports name them."""

import os

import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from tests.support.export_runners import PACKAGES, RUNNERS, run_litert
from tests.support.helpers import PROJECT_DIR, tiny_config
from tests.support.keras_harness import EVERY_MODEL, model_inputs
from tests.support.sentence_transformers_folders import opener


def expected_outputs(model, inputs):
  return {name: np.asarray(value) for name, value in
          bert_tf.models.base.flat_outputs(model(inputs)).items()}


@pytest.mark.parametrize("export_format", RUNNERS)
@pytest.mark.parametrize("name", EVERY_MODEL)
def test_exports_compute_what_keras_computes(name, export_format, tmp_path):
  """fp32 within 1e-5, every output (the encoder's layers one by one)."""
  for package in PACKAGES[export_format]:
    pytest.importorskip(package)
  if export_format == "litert" and name == "BertFeatureTagger":
    pytest.skip("its masked BiLSTM needs the Flex delegate (see "
                "test_the_feature_taggers_bilstm_needs_the_flex_delegate)")
  model, inputs = EVERY_MODEL[name](tiny_config()), model_inputs(name)
  file_name, run = RUNNERS[export_format]
  path = str(tmp_path / file_name)
  model.export(path, format=export_format, verbose=False)
  outputs = run(path, inputs)
  expected = expected_outputs(model, inputs)
  assert sorted(outputs) == sorted(expected)
  for output_name, value in expected.items():
    np.testing.assert_allclose(outputs[output_name], value, rtol=0,
                               atol=1e-5, err_msg=output_name)


def test_the_feature_taggers_bilstm_needs_the_flex_delegate(tmp_path):
  """Its masked BiLSTM becomes TensorList ops, which LiteRT runs only with
  the Flex delegate (select TensorFlow ops): the docs say so; this says
  when it changes."""
  pytest.importorskip("ai_edge_litert.interpreter")
  path = str(tmp_path / "model.tflite")
  EVERY_MODEL["BertFeatureTagger"](tiny_config()).export(
      path, format="litert", verbose=False)
  with pytest.raises(RuntimeError, match="Select TensorFlow op"):
    run_litert(path, model_inputs("BertFeatureTagger"))
  assert os.path.getsize(path) > 0


def test_the_ids_route_names_the_tokenizer_of_the_model_s_rules(tmp_path):
  """An original checkpoint's model may be tokenised by bert_tf.tokenization
  on the client; a Hugging Face folder's, by transformers' rules, by its
  preprocessor alone."""
  original = bert_tf.BertClassifier.from_pretrained(
      f"{PROJECT_DIR}/tests/fixtures/community_checkpoint/biobert_style",
      num_labels=2, max_seq_length=16)
  with pytest.raises(ValueError, match=r"with model.preprocessor or "
                     r"bert_tf.tokenization$"):
    original.export(str(tmp_path / "m.onnx"), format="onnx")
  folder = bert_tf.BertClassifier.from_pretrained(
      f"{PROJECT_DIR}/tests/fixtures/huggingface/transformers5_classifier",
      max_seq_length=16)
  with pytest.raises(ValueError, match=r"with model.preprocessor \("
                     r"bert_tf.tokenization follows the original's rules, "
                     r"not this model's transformers' rules\)$"):
    folder.export(str(tmp_path / "m.onnx"), format="onnx")


@pytest.mark.parametrize("export_format", RUNNERS)
def test_a_raw_text_model_exports_its_ids_to_onnx_and_litert(export_format,
                                                             tmp_path):
  """Its default (string) signature is refused before any file is written,
  naming the ids route; that route computes what Keras computes."""
  model = bert_tf.BertClassifier.from_pretrained(
      f"{PROJECT_DIR}/tests/fixtures/community_checkpoint/biobert_style",
      num_labels=2, max_seq_length=16)
  file_name, run = RUNNERS[export_format]
  path = str(tmp_path / file_name)
  with pytest.raises(ValueError, match=(
      rf"BertClassifier.export\(format='{export_format}'\): its "
      r"preprocessor's TensorFlow Text ops have no .* form; export ids "
      rf"instead, export\(path, format='{export_format}', input_signature="
      r"model.ids_input_signature\(\)\)")):
    model.export(path, format=export_format)
  assert not os.path.exists(path)
  for package in PACKAGES[export_format]:
    pytest.importorskip(package)
  model.export(path, format=export_format, verbose=False,
               input_signature=model.ids_input_signature())
  inputs = {name: np.asarray(ids) for name, ids in
            model.preprocessor(["a protein binds the gene"]).items()}
  outputs = run(path, inputs)
  for output_name, value in expected_outputs(model, inputs).items():
    np.testing.assert_allclose(outputs[output_name], value, rtol=0,
                               atol=1e-5, err_msg=output_name)


@pytest.fixture(scope="module")
def opened():
  return opener()


@pytest.mark.parametrize("name, pairs, inputs", [
    ("cross_encoder", None, ["text_a", "text_b"]),
    ("cross_encoder", False, ["text_a"]),
    ("today_mean", None, ["text"]),
])
def test_a_raw_text_export_names_its_inputs_as_the_runners_do(
    opened, name, pairs, inputs, tmp_path):
  """An embedder takes text, a classifier text_a (a cross-encoder text_b
  too, as run_classifier's pair export), and answers as the model does, an
  empty batch with empty outputs."""
  model = opened(name).model
  signature = None if pairs is None else model.text_input_signature(pairs)
  model.export(str(tmp_path), verbose=False, input_signature=signature)
  serving = tf.saved_model.load(str(tmp_path)).signatures["serving_default"]
  assert sorted(serving.structured_input_signature[1]) == inputs
  texts = ["where is the lake?", "the lake is 5 km long"]
  outputs = serving(**{text: tf.constant(texts) for text in inputs})
  expected = model(tuple([texts] * len(inputs)) if len(inputs) > 1
                   else texts)
  for output_name, value in expected.items():
    np.testing.assert_allclose(outputs[output_name], value, rtol=0,
                               atol=1e-5, err_msg=output_name)
  empty = serving(**{text: tf.constant([], tf.string) for text in inputs})
  assert {output_name: tuple(value.shape) for output_name, value
          in empty.items()} == {output_name: (0, *value.shape[1:])
                                for output_name, value in expected.items()}
