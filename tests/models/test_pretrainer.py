"""BertPretrainer: parity with the original google-research/bert code on
../shared/reference, and its Keras training on ids and on text."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from tests.support.helpers import (ORIGINAL_TINY, PROJECT_DIR, random_inputs,
                                   tiny_config)
from tests.support.keras_harness import run_model_test

INPUT_NAMES = ("input_ids", "input_mask", "segment_ids", "masked_lm_positions")


@pytest.fixture(scope="module")
def reference():
  expected = dict(np.load(f"{ORIGINAL_TINY}/expected.npz"))
  config = bert_tf.BertConfig.from_json_file(f"{ORIGINAL_TINY}/bert_config.json")
  model = bert_tf.BertPretrainer(config)
  bert_tf.load_checkpoint(model, f"{ORIGINAL_TINY}/bert_model.ckpt")
  outputs = model({name: expected[name] for name in INPUT_NAMES},
                  training=False)
  return expected, outputs


@pytest.mark.shared
@pytest.mark.parametrize("ours, theirs", [
    ("embedding_output", "embedding_output"),
    ("sequence_output", "sequence_output"),
    ("pooled_output", "pooled_output"),
    ("next_sentence_log_probs", "nsp_log_probs"),
])
def test_outputs_equal_the_original(reference, ours, theirs):
  expected, outputs = reference
  np.testing.assert_allclose(outputs[ours], expected[theirs], atol=1e-5,
                             rtol=0)


@pytest.mark.shared
def test_every_encoder_layer_equals_the_original(reference):
  expected, outputs = reference
  layers = outputs["all_encoder_layers"]
  assert len(layers) == 2
  for index, layer in enumerate(layers):
    np.testing.assert_allclose(layer, expected[f"layer_{index}"], atol=1e-5,
                               rtol=0)


@pytest.mark.shared
def test_masked_lm_log_probs_and_losses_equal_the_original(reference):
  expected, outputs = reference
  log_probs = np.asarray(outputs["masked_lm_log_probs"])
  assert log_probs.shape == (3, 4, 99)
  np.testing.assert_allclose(log_probs.reshape(-1, 99),
                             expected["mlm_log_probs"], atol=1e-5, rtol=0)
  mlm_loss = bert_tf.masked_lm_loss(log_probs, expected["masked_lm_ids"],
                                    expected["masked_lm_weights"])
  nsp_loss = bert_tf.next_sentence_loss(outputs["next_sentence_log_probs"],
                                        expected["next_sentence_labels"])
  np.testing.assert_allclose(mlm_loss, expected["mlm_loss"], atol=1e-5)
  np.testing.assert_allclose(nsp_loss, expected["nsp_loss"], atol=1e-5)


def test_pretrainer_requires_masked_lm_positions():
  model = bert_tf.BertPretrainer(tiny_config())
  with pytest.raises(ValueError, match="missing 'masked_lm_positions'"):
    model({"input_ids": np.ones((1, 4), np.int32)})


def test_pretrainer_serialises_and_shares_the_embedding_table():
  config = tiny_config()
  model = bert_tf.BertPretrainer(config)
  # tied weights: the masked-LM head owns only its bias, no second table
  names = [weight.path for weight in model.weights]
  assert len(names) == len(set(names))
  assert sum(tuple(w.shape) == (99, 32) for w in model.weights) == 1
  loaded = run_model_test(model, random_inputs(config))
  assert loaded.config == config


COMMUNITY = f"{PROJECT_DIR}/tests/fixtures/community_checkpoint/biobert_style"
TEXTS = ["the gene binds a protein in the cell",
         "a cat and a dog walk along the river", "it was released in 2018",
         "bert reads text in both directions at once"] * 2


@pytest.fixture(scope="module")
def pretrainer():
  keras.utils.set_random_seed(0)
  return bert_tf.BertPretrainer.from_pretrained(COMMUNITY, max_seq_length=16)


def masks(batches):
  """Each text's (masked_lm_positions, masked ids) in the batches."""
  return [(positions.tolist(), ids.tolist()) for features, (batch_ids, _), _
          in batches for positions, ids in zip(
              features["masked_lm_positions"].numpy(), batch_ids.numpy())]


def test_evaluation_masks_are_the_same_on_every_call(pretrainer):
  """Each text is masked by a seed of its position: evaluate(texts) gives
  one loss, whatever the batch size; fit's masks are new each epoch."""
  losses = [pretrainer.evaluate(TEXTS, batch_size=4, verbose=0)
            for _ in range(2)]
  assert losses[0] == losses[1]
  texts = tf.constant(TEXTS)
  # pylint: disable=protected-access
  by_four = masks(pretrainer._fixed_masks(texts, 4))
  assert by_four == masks(pretrainer._fixed_masks(texts, 3))
  training = pretrainer._new_masks(texts, 8, shuffle=False)
  assert masks(training) != masks(training)


def test_fit_on_text_shows_only_the_loss_that_trains(pretrainer):
  """Single texts train no next sentence: no next-sentence loss of 0 in
  the history or the progress bar."""
  history = pretrainer.fit(TEXTS, batch_size=4, verbose=0,
                           validation_data=TEXTS[:4])
  assert set(history.history) == {"loss", "val_loss"}
  assert history.history["val_loss"][0] == pytest.approx(
      pretrainer.evaluate(TEXTS[:4], verbose=0), rel=1e-6)


def test_the_loss_on_ids_is_run_pretrainings():
  config = tiny_config()
  model = bert_tf.BertPretrainer(config)
  model.compile()
  inputs = random_inputs(config)
  masked_lm_ids = np.array([[3, 4, 5, 6], [7, 8, 9, 0], [1, 2, 0, 0]])
  next_sentence_labels = np.array([0, 1, 1])
  weights = (masked_lm_ids > 0).astype(np.float32)
  loss = model.evaluate(inputs, (masked_lm_ids, next_sentence_labels),
                        sample_weight=(weights, np.ones(3)), verbose=0)
  expected = bert_tf.pretraining_loss(
      model(inputs, training=False),
      {"masked_lm_ids": masked_lm_ids, "masked_lm_weights": weights,
       "next_sentence_labels": next_sentence_labels})
  np.testing.assert_allclose(loss, expected, rtol=1e-6)


@pytest.mark.parametrize("x", [("a text", "another"),
                               (["a text"], ["another"])])
def test_a_tuple_is_refused_saying_what_it_takes(pretrainer, x):
  """Pairs' next-sentence labels come with ids, from
  create_pretraining_data."""
  for method in ("fit", "evaluate"):
    with pytest.raises(ValueError, match=(
        rf"^BertPretrainer.{method}: x is a tuple; the masked LM takes single "
        r"texts, in a list: x=\[text, ...\]")):
      getattr(pretrainer, method)(x)
  with pytest.raises(ValueError, match="^BertPretrainer.fit: validation_data "
                     "is a tuple"):
    pretrainer.fit(TEXTS, validation_data=x)


@pytest.mark.parametrize("batch_size", [0, -1, 2.5, "8"])
def test_a_batch_size_of_text_is_checked(pretrainer, batch_size):
  for method in ("fit", "evaluate"):
    with pytest.raises(ValueError, match=(
        rf"^BertPretrainer.{method}: batch_size={batch_size!r} must be an "
        "integer >= 1$")):
      getattr(pretrainer, method)(TEXTS, batch_size=batch_size)
