import math

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.layers.activations import get_activation, inference_activation

X = np.linspace(-6.0, 6.0, 49).astype(np.float32)


def test_gelu_is_the_tanh_approximation_of_the_original():
  expected = [0.5 * x * (1.0 + math.tanh(math.sqrt(2.0 / math.pi)
                                         * (x + 0.044715 * x ** 3)))
              for x in X.astype(np.float64)]
  np.testing.assert_allclose(get_activation("gelu")(X), expected, atol=1e-6)


def test_bfloat16_inference_takes_the_form_tensorflow_fuses():
  """The same tanh approximation as tf.nn.gelu writes it, the pattern
  TensorFlow's oneDNN rewrite fuses into the matmul before it; float32
  keeps the original's own form."""
  assert inference_activation("gelu", "float32") is get_activation("gelu")
  assert inference_activation("gelu_exact", "bfloat16") is get_activation(
      "gelu_exact")
  fused = inference_activation("gelu", "bfloat16")
  graph = tf.function(fused).get_concrete_function(
      tf.TensorSpec([None], tf.bfloat16)).graph
  assert "Tanh" in {op.type for op in graph.get_operations()}
  np.testing.assert_allclose(fused(X), get_activation("gelu")(X), atol=1e-6)
  np.testing.assert_allclose(
      tf.cast(fused(tf.cast(X, tf.bfloat16)), tf.float32),
      get_activation("gelu")(X), atol=np.abs(X).max() * 2**-7)


def test_gelu_exact_uses_erf_and_differs_from_the_approximation():
  expected = [0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0)))
              for x in X.astype(np.float64)]
  exact = np.asarray(get_activation("gelu_exact")(X))
  np.testing.assert_allclose(exact, expected, atol=1e-6)
  assert np.abs(exact - np.asarray(get_activation("gelu")(X))).max() > 1e-4


@pytest.mark.parametrize("name, reference", [
    ("relu", lambda x: np.maximum(x, 0)),
    ("tanh", np.tanh),
    ("linear", lambda x: x),
])
def test_simple_activations(name, reference):
  np.testing.assert_allclose(get_activation(name)(X), reference(X), atol=1e-6)


def test_unknown_activation():
  with pytest.raises(ValueError, match="Unknown hidden_act 'swish'"):
    get_activation("swish")


def test_gelu_and_its_gradient_are_the_original_formula_s():
  """Against the original's formula and its autodiff in float64: the
  hand-written derivative is as close as float32 allows (closer than
  float32 autodiff of the formula, 3.3e-6)."""
  def original(x):
    return 0.5 * x * (1.0 + tf.tanh(
        math.sqrt(2.0 / math.pi) * (x + 0.044715 * tf.pow(x, 3))))

  def value_and_gradient(function, x):
    with tf.GradientTape() as tape:
      tape.watch(x)
      y = function(x)
    return y.numpy(), tape.gradient(y, x).numpy()

  x = np.linspace(-8.0, 8.0, 401)
  expected = value_and_gradient(original, tf.constant(x, tf.float64))
  actual = value_and_gradient(get_activation("gelu"),
                              tf.constant(x, tf.float32))
  np.testing.assert_allclose(actual[0], expected[0], atol=1e-6)
  np.testing.assert_allclose(actual[1], expected[1], atol=2e-6)
