import math

import numpy as np
import pytest

from bert_tf.layers.activations import get_activation

X = np.linspace(-6.0, 6.0, 49).astype(np.float32)


def test_gelu_is_the_tanh_approximation_of_the_original():
  expected = [0.5 * x * (1.0 + math.tanh(math.sqrt(2.0 / math.pi)
                                         * (x + 0.044715 * x ** 3)))
              for x in X.astype(np.float64)]
  np.testing.assert_allclose(get_activation("gelu")(X), expected, atol=1e-6)


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
