"""BertClassifier: run_classifier's model and its checkpoint names."""

import json
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from tests.support.helpers import (ORIGINAL_TINY, PROJECT_DIR, random_inputs,
                                   tiny_config)
from tests.support.keras_harness import run_model_test
from tests.support.sentence_transformers_folders import (
    FIXTURES_DIR, assert_as_sentence_transformers, expected, opener)

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


@pytest.fixture(scope="module")
def opened():
  return opener()


@pytest.fixture(scope="module")
def cross_encoder(opened):
  return opened("cross_encoder").model


def test_pairs_come_as_columns_or_as_sentence_transformers_pairs(
    cross_encoder):
  """A tuple of two columns (lists or tuples), or CrossEncoder.predict's
  list of (query, passage) pairs (tuples or lists) or numpy array [n, 2]
  of them: the same scores, in predict and in a call."""
  values = expected("cross_encoder")
  firsts, seconds = values["firsts"], values["seconds"]
  for form in ((firsts, seconds), (tuple(firsts), tuple(seconds)),
               list(zip(firsts, seconds)),
               [list(pair) for pair in zip(firsts, seconds)],
               np.array(list(zip(firsts, seconds)))):
    assert_as_sentence_transformers(
        cross_encoder.predict(form, verbose=0)["scores"], values["scores"])
    assert_as_sentence_transformers(cross_encoder(form)["scores"],
                                    values["scores"])


@pytest.mark.parametrize("x, message", [
    ([("q", "p"), ("q", None)], r"x\[1\]'s second text is None; expected a "
                                "str"),
    ([("q", "p"), (3, "p")], r"x\[1\]'s first text is int"),
    ([("q", "p"), ("q",)], r"x\[1\] is of length 1; expected a \(text_a, "
                           r"text_b\) pair, as x\[0\]"),
    ([("q", "p"), "q"], r"x\[1\] is str; expected a \(text_a, text_b\) pair"),
    ((["q", None], ["p", "p"]), r"x\[0\]\[1\] is None; expected a str"),
    ((("q",), ("p",), ("r",)), "x is a tuple of 3 columns; expected texts, "
                               r"or two columns \(text_a, text_b\), or a "
                               r"list of \(text_a, text_b\) pairs"),
    (["q", None], r"x\[1\] is None; expected a str"),
    (np.array([["q", "p", "r"]]), r"x is an array of shape \(1, 3\); "
                                  r"expected texts \[batch\]"),
    (["\ud800"], r"x\[0\] holds a lone surrogate"),
])
def test_what_is_not_a_text_is_refused_by_position(cross_encoder, x,
                                                   message):
  for method in ("predict", "evaluate"):
    with pytest.raises(ValueError, match=f"^BertClassifier.{method}: "
                                         f"{message}") as error:
      getattr(cross_encoder, method)(x)
    assert "\n" not in str(error.value)
  with pytest.raises(ValueError, match=f"^BertClassifier: {message}"):
    cross_encoder(x)


@pytest.mark.parametrize("name", ["cross_encoder", "cross_encoder_nli"])
def test_a_cross_encoders_default_loss_is_sentence_transformers(opened,
                                                                name):
  """compile()'s loss on a batch equals that of CrossEncoderTrainer's
  default (binary cross-entropy on the logit for one label, graded labels
  too; cross-entropy for three), make_cross_encoder_loss.py."""
  with open(os.path.join(FIXTURES_DIR, "cross_encoder_loss.json"),
            encoding="utf-8") as reader:
    values = json.load(reader)
  model = opened(name).model
  model.compile()
  loss = model.compute_loss(
      y=np.array(values[name]["labels"]),
      y_pred=model((values["queries"], values["passages"]), training=False))
  np.testing.assert_allclose(loss, values[name]["value"], rtol=1e-5)


@pytest.mark.parametrize("model, advice", [
    (lambda: bert_tf.BertClassifier(tiny_config(), 2),
     r"BertClassifier.from_pretrained\(model_dir\), or preprocessor="
     r"bert_tf.BertPreprocessor\(vocab_file\), gives a model that takes "
     "text$"),
    (lambda: bert_tf.BertTagger(tiny_config(), 3),
     r"BertTagger.from_pretrained\(model_dir\), or preprocessor="
     r"bert_tf.BertTaggerPreprocessor\(vocab_file\), gives a model that "
     "takes text$"),
])
def test_a_model_of_ids_given_text_says_how_to_give_it_text(model, advice):
  """Python strings, numpy or tensors of them, a dataset of them, in fit,
  evaluate, predict and a call: one line naming the ids the model takes,
  where Keras says "Unrecognized data type"."""
  model = model()
  name = type(model).__name__
  texts = ["a text", "another"]
  for x in (texts, np.array(texts), tf.constant(texts), (texts, texts),
            tf.data.Dataset.from_tensor_slices(texts).batch(2)):
    for method in ("fit", "evaluate", "predict"):
      with pytest.raises(ValueError, match=(
          f"^{name}.{method}: the model takes ids \\(input_ids, input_mask, "
          f"segment_ids\\), not text; {advice}")):
        getattr(model, method)(x)
  with pytest.raises(ValueError, match=f"^BertClassifier: the model takes "
                                       "ids"):
    bert_tf.BertClassifier(tiny_config(), 2)(texts)


COMMUNITY = f"{PROJECT_DIR}/tests/fixtures/community_checkpoint/biobert_style"
TEXTS = [f"text number {index} about {'cats' if index % 2 else 'dogs'}"
         for index in range(8)]


@pytest.fixture(scope="module")
def three_labels():
  """A raw-text classifier of 3 named labels, compiled; never trained
  here (each case is refused before a step)."""
  return bert_tf.BertClassifier.from_pretrained(
      COMMUNITY, num_labels=3, max_seq_length=16,
      labels=["negative", "neutral", "positive"])


def test_labels_as_a_list_tuple_array_or_tensor():
  """Lists work as they do for texts; each form gives the same loss."""
  model = bert_tf.BertClassifier.from_pretrained(COMMUNITY, num_labels=3,
                                                 max_seq_length=16)
  labels = [index % 3 for index in range(8)]
  model.fit(TEXTS, labels, batch_size=8, verbose=0)
  losses = [model.evaluate(TEXTS, form, verbose=0)[0]
            for form in (labels, tuple(labels), np.array(labels),
                         tf.constant(labels), np.array(labels, np.float32))]
  # Sample weights as a list too (Keras alone blames x for one).
  losses.append(model.evaluate(TEXTS, labels, sample_weight=[1.0] * 8,
                               verbose=0)[0])
  np.testing.assert_allclose(losses, losses[0], rtol=1e-6)


@pytest.mark.parametrize("labels, message", [
    ([7] * 8, r"y holds 7; expected class ids 0 to 2 \(num_labels=3\)$"),
    ([0] * 7 + [-1], "y holds -1; expected class ids 0 to 2"),
    ([0.5] * 8, "y holds 0.5; expected class ids 0 to 2"),
    ([0] * 7 + [float("nan")], "y holds nan; expected finite numbers"),
    ([0] * 7 + [None], "y holds None; expected numbers"),
    (["positive"] * 8, r"y holds strings \('positive', ...\); expected class "
     r"ids 0 to 2 \(num_labels=3\): the model's labels are \['negative', "
     r"'neutral', 'positive'\], so pass \[model.labels.index\(label\) for "
     r"label in y\]$"),
    ([[1, 0, 0]] * 8, r"y is shaped \[8, 3\]; expected \[examples\] of class "
     r"ids \(num_labels=3\)$"),
    ([0] * 7, "y holds 7 targets for 8 examples in x$"),
    ([[0], [1, 2]] * 4, "y holds rows of different lengths; expected one "
     "array$"),
    (None, r"y is missing; expected \[examples\] of class ids"),
])
def test_labels_the_head_cannot_take_are_refused_before_any_step(
    three_labels, labels, message):
  """Keras' loss fails on them only once training runs ("Graph execution
  error"), on strings it blames x ("Unrecognized data type"), and a first
  fit that failed in Keras leaves the model unable to train."""
  weights = three_labels.get_weights()
  for method in ("fit", "evaluate"):
    with pytest.raises(ValueError, match=f"^BertClassifier.{method}: "
                                         f"{message}"):
      getattr(three_labels, method)(TEXTS, labels, verbose=0)
  with pytest.raises(ValueError, match=f"^BertClassifier.fit: "
                     f"validation_data's {message}"):
    three_labels.fit(TEXTS, [0] * 8, verbose=0,
                     validation_data=(TEXTS, labels))
  assert int(three_labels.optimizer.iterations) == 0
  assert all(np.array_equal(now, then) for now, then in
             zip(three_labels.get_weights(), weights))


def test_string_labels_of_a_model_without_label_names():
  model = bert_tf.BertClassifier(tiny_config(), 2)
  x = {"input_ids": np.ones((2, 4), np.int32)}
  with pytest.raises(ValueError, match=r"^BertClassifier.fit: y holds "
                     r"strings \('yes', ...\); expected class ids 0 to 1 "
                     r"\(num_labels=2\); the model names no labels$"):
    model.fit(x, np.array(["yes", "no"]))


@pytest.mark.parametrize("arguments, labels, message", [
    ({"num_labels": 1}, ["0.5", "1"], "y holds '0.5'; expected numbers"),
    ({"num_labels": 1}, [[0.5, 1.0]] * 2, r"y is shaped \[2, 2\]; expected "
     r"\[examples\] of numbers"),
    ({"num_labels": 3, "problem_type": "multi_label_classification"},
     [0, 2], r"y is shaped \[2\]; expected \[examples, 3\] of 0 or 1"),
    ({"num_labels": 3, "problem_type": "multi_label_classification"},
     [[0, 1, 2]] * 2, r"y holds 2; expected \[examples, 3\] of 0 or 1, each "
     "from 0 to 1"),
    ({"num_labels": 1, "score_activation": "sigmoid"}, [0.5, 3.0],
     r"y holds 3.0; expected \[examples\] of scores, each from 0 to 1"),
])
def test_targets_of_regression_multi_label_and_cross_encoders(
    arguments, labels, message):
  model = bert_tf.BertClassifier(tiny_config(), **arguments)
  model.compile()
  with pytest.raises(ValueError, match=f"^BertClassifier.fit: {message}$"):
    model.fit({"input_ids": np.ones((2, 4), np.int32)}, labels)
