"""Activations by the names bert_config.json uses.

"gelu" is the tanh approximation, because that is what the original
modeling.py computes and what released checkpoints were trained with; the
exact erf form is available as "gelu_exact".
"""

import math

import tensorflow as tf
from keras import ops

# 0.5 * (1 + tanh(z)) == sigmoid(2 z): the original's tanh-approximated CDF
# is sigmoid(x * (_SLOPE + _CUBIC * x * x)).
_SLOPE = 2.0 * math.sqrt(2.0 / math.pi)
_CUBIC = _SLOPE * 0.044715


@tf.custom_gradient
def gelu(x):
  """GELU, the original modeling.gelu's tanh approximation,
  0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x ** 3))), computed as
  its equal x * sigmoid(...) with the derivative written out: fewer
  element-wise passes over the widest activations of the step than autodiff
  of the original's formula (forward and back on [4096, 1024], 14 ms
  against 19 on 2 CPU cores), equal within float32 rounding (tested)."""
  x = tf.convert_to_tensor(x)
  squared = x * x
  cdf = tf.sigmoid(x * (_SLOPE + _CUBIC * squared))

  def gradient(upstream):
    return upstream * (cdf + x * cdf * (1.0 - cdf)
                       * (_SLOPE + 3.0 * _CUBIC * squared))

  return x * cdf, gradient


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


def _gelu_as_tensorflow_writes_it(x):
  return tf.nn.gelu(x, approximate=True)


# Where no gradient is taken, the forms of TensorFlow's own ops, which its
# oneDNN graph rewrite fuses into the matmul and bias before them (one
# kernel); gelu's own form, faster to differentiate, is left as five
# element-wise ops. The same function to bfloat16's precision (tested).
FUSED_IN_INFERENCE = {"gelu": _gelu_as_tensorflow_writes_it}


def inference_activation(name, compute_dtype):
  """The activation `name` for a forward pass alone in compute_dtype:
  in bfloat16 the form TensorFlow fuses; float32 keeps the original's."""
  if compute_dtype == "bfloat16" and name in FUSED_IN_INFERENCE:
    return FUSED_IN_INFERENCE[name]
  return get_activation(name)


# What an embedder's Dense layers and a cross-encoder's scores may apply:
# the torch activations sentence-transformers records
# (checkpoints.sentence_transformers.activations.ACTIVATIONS), by bert_tf's
# names.
HEAD_ACTIVATIONS = {
    "linear": _linear,
    "tanh": ops.tanh,
    "sigmoid": ops.sigmoid,
    "relu": ops.relu,
    "gelu_exact": gelu_exact,
}
