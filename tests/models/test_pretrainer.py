"""Parity with the original google-research/bert code on ../shared/reference."""

import numpy as np
import pytest

import bert_tf
from tests.support.helpers import ORIGINAL_TINY, random_inputs, tiny_config
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
