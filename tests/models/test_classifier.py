"""BertClassifier: run_classifier's model and its checkpoint names."""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from tests.support.helpers import (ORIGINAL_TINY, PROJECT_DIR, random_inputs,
                                   tiny_config)
from tests.support.keras_harness import run_model_test

INPUT_NAMES = ("input_ids", "input_mask", "segment_ids")


@pytest.mark.shared
def test_fine_tuning_starts_from_the_released_encoder():
  """A pretraining checkpoint loads the encoder; the fresh head is reported
  missing and the pretraining heads unused, as the original's init logs."""
  config = bert_tf.BertConfig.from_json_file(
      f"{ORIGINAL_TINY}/bert_config.json")
  model = bert_tf.BertClassifier(config, num_labels=3)
  report = bert_tf.load_checkpoint(model, f"{ORIGINAL_TINY}/bert_model.ckpt")
  assert report.not_in_checkpoint == ["output_weights", "output_bias"]
  assert all(name.startswith("cls/") for name in report.unused)
  expected = dict(np.load(f"{ORIGINAL_TINY}/expected.npz"))
  pooled = model.encoder({name: expected[name] for name in INPUT_NAMES},
                         training=False)["pooled_output"]
  np.testing.assert_allclose(pooled, expected["pooled_output"], atol=1e-5)


def test_checkpoint_names_and_shapes_are_run_classifiers(tmp_path):
  model = bert_tf.BertClassifier(tiny_config(), num_labels=3)
  path = bert_tf.save_checkpoint(model, str(tmp_path / "model.ckpt-1"))
  shapes = dict(tf.train.list_variables(path))
  assert shapes["output_weights"] == [3, 32]
  assert shapes["output_bias"] == [3]
  assert "bert/pooler/dense/kernel" in shapes
  restored = bert_tf.BertClassifier(tiny_config(), num_labels=3)
  bert_tf.load_checkpoint(restored, path)
  inputs = {name: value for name, value in
            random_inputs(tiny_config()).items() if name in INPUT_NAMES}
  np.testing.assert_allclose(restored(inputs)["probabilities"],
                             model(inputs)["probabilities"], atol=1e-6)


def test_outputs_for_classes_and_regression():
  inputs = {name: value for name, value in
            random_inputs(tiny_config()).items() if name in INPUT_NAMES}
  classifier = bert_tf.BertClassifier(tiny_config(), num_labels=3)
  outputs = classifier(inputs)
  np.testing.assert_allclose(outputs["probabilities"],
                             tf.nn.softmax(outputs["logits"]), atol=1e-6)
  np.testing.assert_allclose(np.sum(outputs["probabilities"], -1), 1.0,
                             atol=1e-6)
  regressor = bert_tf.BertClassifier(tiny_config(), num_labels=1)
  outputs = regressor(inputs)
  assert outputs["predictions"].shape == (3,)
  assert "probabilities" not in outputs


def test_round_trips_through_its_config():
  model = bert_tf.BertClassifier(tiny_config(), num_labels=2)
  inputs = {name: value for name, value in
            random_inputs(tiny_config()).items() if name in INPUT_NAMES}
  run_model_test(model, inputs)


@pytest.mark.parametrize("num_labels", [0, -2, 2.0, "2"])
def test_a_number_of_labels_under_one_is_refused(num_labels):
  with pytest.raises(ValueError, match=f"BertClassifier: num_labels="
                                       f"{num_labels!r} .*integer >= 1"):
    bert_tf.BertClassifier(tiny_config(), num_labels)


def test_a_preprocessor_the_encoder_cannot_take_is_refused():
  """Refused when the model is built, not at its first batch."""
  vocab = os.path.join(PROJECT_DIR, "vocab", "demo_uncased_vocab.txt")
  size = len(open(vocab).readlines())
  with pytest.raises(ValueError, match="max_seq_length 65 .* "
                                       "max_position_embeddings is 64"):
    bert_tf.BertClassifier(
        tiny_config(vocab_size=size), 2,
        preprocessor=bert_tf.BertPreprocessor(vocab, True, 65))
  with pytest.raises(ValueError, match=f"vocabulary has {size} tokens, but "
                                       "the encoder's vocab_size is 99"):
    bert_tf.BertClassifier(
        tiny_config(), 2,
        preprocessor=bert_tf.BertPreprocessor(vocab, True, 16))
  with pytest.raises(ValueError, match="preprocessor is a Dense layer, not a "
                                       "BertPreprocessor"):
    bert_tf.BertClassifier(tiny_config(), 2,
                           preprocessor=tf.keras.layers.Dense(2))


def test_no_inputs_is_a_clear_error():
  model = bert_tf.BertClassifier(tiny_config(), 2)
  for inputs in ([], {}):
    with pytest.raises(ValueError, match="BertClassifier.predict: x holds "
                                         "no examples"):
      model.predict(inputs)


@pytest.mark.parametrize("activation", ["softmax", "Sigmoid", "identity"])
def test_a_score_activation_not_reproduced_is_refused(activation):
  with pytest.raises(ValueError, match=(
      f"^BertClassifier: score_activation={activation!r}; expected one of "
      f"{', '.join(bert_tf.models.classifier.SCORE_ACTIVATIONS)} or None$")):
    bert_tf.BertClassifier(tiny_config(), 1, score_activation=activation)


def test_scores_are_the_score_activation_of_the_logits(tmp_path):
  """A cross-encoder's scores ([batch] for one label, as
  CrossEncoder.predict), kept by a .keras file; none without an
  activation."""
  inputs = {name: value for name, value in
            random_inputs(tiny_config()).items() if name in INPUT_NAMES}
  model = bert_tf.BertClassifier(tiny_config(), 1, score_activation="sigmoid")
  outputs = model(inputs)
  np.testing.assert_allclose(outputs["scores"],
                             tf.sigmoid(outputs["logits"][:, 0]), atol=1e-6)
  path = str(tmp_path / "cross_encoder.keras")
  model.save(path)
  loaded = keras.saving.load_model(path)
  assert loaded.score_activation == "sigmoid"
  np.testing.assert_array_equal(loaded(inputs)["scores"], outputs["scores"])
  three = bert_tf.BertClassifier(tiny_config(), 3, score_activation="linear")
  outputs = three(inputs)
  np.testing.assert_array_equal(outputs["scores"], outputs["logits"])
  assert "scores" not in bert_tf.BertClassifier(tiny_config(), 1)(inputs)


def test_one_bare_text_is_refused_saying_to_pass_a_list():
  """Keras' own error ("Unrecognized data type") does not say what to
  pass."""
  model = bert_tf.BertClassifier.from_pretrained(
      f"{PROJECT_DIR}/tests/fixtures/community_checkpoint/biobert_style",
      num_labels=2, max_seq_length=16)
  with pytest.raises(ValueError, match=r"^BertClassifier.predict: one text, "
                     r"not a batch; pass a list: predict\(\['one text'\]\)$"):
    model.predict("one text")
  with pytest.raises(ValueError, match=r"^BertClassifier: one text, not a "
                     r"batch; pass a list: model\(\[b'x'\]\)$"):
    model(b"x")
  with pytest.raises(ValueError, match=r"evaluate\(\(\['a'\], \['b'\]\)\)"):
    model.evaluate(("a", "b"), [1])
  assert model.predict(["one text"], verbose=0)["logits"].shape == (1, 2)
