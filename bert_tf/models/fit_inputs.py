"""What fit, evaluate and predict are given, checked before Keras takes
it: x holds examples, text is told apart from ids, fit's counts are whole
numbers, a sample weight's list is an array. Keras' own errors for these
name something else, or come only at a step."""

import inspect

import keras
import numpy as np
import tensorflow as tf

from bert_tf.models import targets
from bert_tf.models.argument_checks import check_positive_int


def check_fit_numbers(model_name, args, kwargs):
  """Raises ValueError unless fit's batch_size, epochs and steps_per_epoch
  (those given) are integers >= 1: the default schedule divides by them,
  and Keras takes some of the others in silence."""
  arguments = inspect.signature(keras.Model.fit).bind(
      None, None, None, *args, **kwargs).arguments
  for name in ("batch_size", "epochs", "steps_per_epoch"):
    if arguments.get(name) is not None:
      check_positive_int(arguments[name], name, f"{model_name}.fit")


def sample_weight_as_arrays(kwargs, name):
  """kwargs' sample_weight, a list, as an array (Keras takes arrays, and
  blames x for a list)."""
  if kwargs.get("sample_weight") is not None:
    kwargs["sample_weight"] = targets.as_arrays(kwargs["sample_weight"],
                                                f"{name}: sample_weight")


def has_no_examples(x):
  """True for inputs Keras fails on with an unrelated error (KeyError: 'pop
  from an empty set'): an empty list, tuple or dict, or a first axis of 0."""
  leaves = keras.tree.flatten(x)
  return not leaves or any(
      getattr(leaf, "shape", None) is not None and len(leaf.shape) > 0
      and leaf.shape[0] == 0 for leaf in leaves)


def holds_text(x):
  """True for inputs holding strings: Python ones, a numpy array or a
  tensor of them, or a dataset whose elements have some."""
  for leaf in keras.tree.flatten(x):
    if isinstance(leaf, tf.data.Dataset):
      leaf = leaf.element_spec
      if any(spec.dtype == tf.string for spec in tf.nest.flatten(leaf)):
        return True
    elif isinstance(leaf, (str, bytes)) or _is_text_array(leaf):
      return True
  return False


def _is_text_array(value):
  """A numpy array of strings, or a tensor (eager or Keras') of them."""
  if isinstance(value, np.ndarray):
    return value.dtype.kind in "US" or (
        value.dtype.kind == "O" and value.size > 0
        and isinstance(value.flat[0], (str, bytes)))
  dtype = getattr(value, "dtype", None)
  if isinstance(dtype, tf.DType):
    return dtype == tf.string
  return dtype == "string"  # a KerasTensor's
