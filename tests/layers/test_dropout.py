import numpy as np
import pytest
import tensorflow as tf

from bert_tf.layers.dropout import Dropout, dropout
from tests.support.keras_harness import run_layer_test

SEED = tf.constant([3, 7], tf.int64)


def test_drops_the_rate_and_scales_the_rest_as_the_original():
  x = tf.ones([64, 128, 256])
  y = np.asarray(dropout(x, 0.1, SEED))
  kept = y != 0
  # 6554 of 65536 levels dropped; 2.1M draws put the fraction within
  # +-0.001 of it (over 4 standard deviations).
  assert abs((~kept).mean() - 6554 / 65536) < 1e-3
  np.testing.assert_array_equal(y[kept], np.float32(1.0 / 0.9))


def test_neighbouring_halves_of_a_word_are_independent():
  # Each 32-bit draw serves two neighbours along the last axis: their
  # masks must not agree more often than chance.
  mask = np.asarray(dropout(tf.ones([512, 1024]), 0.5, SEED)) != 0
  agree = (mask[:, 0::2] == mask[:, 1::2]).mean()
  assert abs(agree - 0.5) < 0.005


def test_same_seed_same_mask_other_seed_other_mask():
  x = tf.random.normal([8, 16, 32])
  first = np.asarray(dropout(x, 0.3, SEED))
  np.testing.assert_array_equal(first, np.asarray(dropout(x, 0.3, SEED)))
  assert (first != np.asarray(dropout(x, 0.3, SEED + 1))).any()


@pytest.mark.parametrize("shape", [[5, 7], [3, 1], [4, 2, 9], [6]])
def test_odd_and_small_last_axes(shape):
  x = tf.random.normal(shape) + 10.0  # never 0, so zeros are drops
  y = np.asarray(dropout(x, 0.5, SEED))
  kept = y != 0
  np.testing.assert_allclose(y[kept], np.asarray(x)[kept] * 2.0)


def test_unknown_shapes_under_xla_and_bfloat16():
  @tf.function(jit_compile=True, input_signature=[
      tf.TensorSpec([None, None], tf.bfloat16)])
  def apply(x):
    return dropout(x, 0.25, SEED)

  x = tf.cast(tf.random.normal([9, 33]) + 10.0, tf.bfloat16)
  y = apply(x)
  assert y.dtype == tf.bfloat16
  kept = np.asarray(tf.cast(y, tf.float32)) != 0
  np.testing.assert_allclose(
      np.asarray(tf.cast(y, tf.float32))[kept],
      np.asarray(tf.cast(x * tf.constant(1 / 0.75, tf.bfloat16),
                         tf.float32))[kept])
  assert 0 < kept.mean() < 1


def test_gradient_is_the_same_mask():
  x = tf.random.normal([16, 40])
  upstream = tf.random.normal([16, 40])
  with tf.GradientTape() as tape:
    tape.watch(x)
    y = dropout(x, 0.4, SEED)
  gradient = np.asarray(tape.gradient(y, x, output_gradients=upstream))
  mask = np.asarray(y) / np.asarray(x)
  np.testing.assert_allclose(gradient, np.asarray(upstream) * mask,
                             rtol=1e-6)


def test_layer_draws_anew_each_call_and_passes_through_unless_training():
  layer = Dropout(0.5, seed=1)
  x = tf.random.normal([4, 64])
  np.testing.assert_array_equal(layer(x), x)
  np.testing.assert_array_equal(Dropout(0.0)(x, training=True), x)
  assert (np.asarray(layer(x, training=True))
          != np.asarray(layer(x, training=True))).any()
  run_layer_test(layer, x)


@pytest.mark.parametrize("rate", [-0.1, 1.0])
def test_rate_outside_zero_to_one_is_refused(rate):
  with pytest.raises(ValueError, match="dropout rate"):
    Dropout(rate)
