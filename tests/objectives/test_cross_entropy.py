"""sparse_cross_entropy_with_logits against TensorFlow's fused op."""

import numpy as np
import tensorflow as tf

from bert_tf.objectives.cross_entropy import sparse_cross_entropy_with_logits


def _native_and_ours(labels, logits):
  """(losses, gradients) of TensorFlow's fused op and of
  sparse_cross_entropy_with_logits, for an upstream gradient that is not
  all ones."""
  logits = tf.constant(logits)
  labels = tf.constant(labels)
  upstream = tf.linspace(0.5, 2.0, labels.shape[0])
  results = []
  for function in (
      lambda: tf.nn.sparse_softmax_cross_entropy_with_logits(
          labels=labels, logits=logits),
      lambda: sparse_cross_entropy_with_logits(labels, logits)):
    with tf.GradientTape() as tape:
      tape.watch(logits)
      losses = function()
    results.append((losses.numpy(),
                    tape.gradient(losses, logits, upstream).numpy()))
  return results


def test_cross_entropy_equals_tensorflows_fused_op():
  rng = np.random.default_rng(1)
  logits = (rng.normal(size=(64, 997)) * 8).astype(np.float32)
  labels = rng.integers(0, 997, 64).astype(np.int32)
  (theirs, their_gradient), (ours, our_gradient) = _native_and_ours(labels,
                                                                    logits)
  np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6)
  np.testing.assert_allclose(our_gradient, their_gradient, rtol=1e-5,
                             atol=1e-7)


def test_cross_entropy_of_extreme_logits():
  # Far apart, equal rows, a -inf entry that is not the label: the
  # largest logit is taken out before exp, as the fused op does.
  logits = np.array([[1e4, -1e4, 0.0], [5.0, 5.0, 5.0],
                     [-np.inf, 3.0, 2.0], [-1e4, 1e4, 1e4]], np.float32)
  labels = np.array([1, 2, 1, 0], np.int32)
  (theirs, their_gradient), (ours, our_gradient) = _native_and_ours(labels,
                                                                    logits)
  np.testing.assert_allclose(ours, theirs, rtol=1e-6)
  np.testing.assert_allclose(our_gradient, their_gradient, rtol=1e-6,
                             atol=1e-7)
