"""The original run_pretraining's losses, by hand."""

import math

import numpy as np

import bert_tf
from bert_tf.objectives import pretraining


def test_masked_lm_loss_is_weighted_by_hand():
  probs = np.array([[[0.5, 0.25, 0.25], [0.1, 0.8, 0.1]],
                    [[0.2, 0.2, 0.6], [1 / 3, 1 / 3, 1 / 3]]], np.float32)
  ids = np.array([[0, 1], [2, 0]], np.int32)
  weights = np.array([[1.0, 1.0], [1.0, 0.0]], np.float32)
  expected = -(math.log(0.5) + math.log(0.8) + math.log(0.6)) / (3 + 1e-5)
  loss = bert_tf.masked_lm_loss(np.log(probs), ids, weights)
  np.testing.assert_allclose(loss, expected, rtol=1e-6)


def test_logits_and_log_probabilities_give_the_same_loss():
  logits = np.random.default_rng(0).normal(size=(2, 3, 7)).astype(np.float32)
  log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
  ids = np.array([[0, 6, 3], [2, 2, 5]], np.int32)
  expected = -np.take_along_axis(log_probs, ids[..., None], -1)[..., 0]
  for scores in (logits, log_probs):
    np.testing.assert_allclose(
        pretraining.masked_lm_example_losses(ids, scores), expected,
        rtol=1e-6)


def test_masked_lm_loss_without_predictions_is_zero():
  loss = bert_tf.masked_lm_loss(np.log(np.full((1, 2, 3), 1 / 3, np.float32)),
                                np.zeros((1, 2), np.int32),
                                np.zeros((1, 2), np.float32))
  assert float(loss) == 0.0


def test_next_sentence_loss_label_zero_is_is_next():
  log_probs = np.log(np.array([[0.9, 0.1], [0.3, 0.7]], np.float32))
  labels = np.array([[0], [1]], np.int32)
  expected = -(math.log(0.9) + math.log(0.7)) / 2
  np.testing.assert_allclose(bert_tf.next_sentence_loss(log_probs, labels),
                             expected, rtol=1e-6)


def test_pretraining_loss_is_the_sum():
  log_probs = np.log(np.full((1, 2, 3), 1 / 3, np.float32))
  nsp = np.log(np.array([[0.25, 0.75]], np.float32))
  features = {"masked_lm_ids": np.zeros((1, 2), np.int32),
              "masked_lm_weights": np.ones((1, 2), np.float32),
              "next_sentence_labels": np.array([[1]], np.int32)}
  loss = bert_tf.pretraining_loss(
      {"masked_lm_log_probs": log_probs, "next_sentence_log_probs": nsp},
      features)
  np.testing.assert_allclose(loss, math.log(3) * 2 / (2 + 1e-5)
                             - math.log(0.75), rtol=1e-6)


def test_masked_lm_losses_compile_for_unknown_shapes():
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  logits = np.random.default_rng(2).normal(size=(2, 3, 11)).astype(
      np.float32)
  ids = np.array([[0, 10, 3], [2, 2, 5]], np.int64)
  expected = pretraining.masked_lm_example_losses(ids, logits)
  for jit_compile in (False, True):
    compiled = tf.function(
        pretraining.masked_lm_example_losses,
        jit_compile=jit_compile,
        input_signature=[tf.TensorSpec([None, None], tf.int64),
                         tf.TensorSpec([None, None, None], tf.float32)])
    np.testing.assert_allclose(compiled(ids, logits), expected, rtol=1e-6)
