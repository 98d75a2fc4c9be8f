"""Activations by the names bert_config.json uses.

"gelu" is the tanh approximation, because that is what the original
modeling.py computes and what released checkpoints were trained with; the
exact erf form is available as "gelu_exact".
"""

import math

from keras import ops


def gelu(x):
  """GELU, tanh approximation, exactly as the original modeling.gelu."""
  cdf = 0.5 * (1.0 + ops.tanh(
      math.sqrt(2.0 / math.pi) * (x + 0.044715 * ops.power(x, 3))))
  return x * cdf


def gelu_exact(x):
  """GELU with the Gaussian CDF computed by erf."""
  return 0.5 * x * (1.0 + ops.erf(x / math.sqrt(2.0)))


def _linear(x):
  return x


ACTIVATIONS = {
    "gelu": gelu,
    "gelu_exact": gelu_exact,
    "relu": ops.relu,
    "tanh": ops.tanh,
    "linear": _linear,
}


def get_activation(name):
  """Returns the activation function called `name` in a BERT config."""
  try:
    return ACTIVATIONS[name]
  except KeyError:
    raise ValueError(f"Unknown hidden_act {name!r}; expected one of "
                     f"{sorted(ACTIVATIONS)}") from None
