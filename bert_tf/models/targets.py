"""fit's and evaluate's targets, as Keras takes them and checked against
the model's head before the first step: Keras' losses fail on a label out
of range only once training runs (a "Graph execution error"), and on a GPU
read a wrong logit silently."""

import numbers

import numpy as np
import tensorflow as tf


def as_arrays(y, where):
  """y with each list or tuple of values as a numpy array (Keras takes
  arrays, not lists); a dict, a tuple of lists or arrays, or a list of
  arrays, is several targets and keeps its structure (a BertPretrainer's
  (masked_lm_ids, next_sentence_labels))."""
  if isinstance(y, dict):
    return {name: as_arrays(value, f"{where}[{name!r}]")
            for name, value in y.items()}
  if _is_structure(y):
    return type(y)(as_arrays(value, f"{where}[{index}]")
                   for index, value in enumerate(y))
  ragged = isinstance(y, tf.RaggedTensor)
  if isinstance(y, (list, tuple)) and not ragged:
    try:
      return np.asarray(y)
    except ValueError:  # NumPy's "inhomogeneous shape"
      ragged = True
  if ragged:
    raise ValueError(f"{where} holds rows of different lengths; expected "
                     "one array")
  return y


def _is_structure(y):
  """Whether a list or tuple y is several targets, as Keras reads it."""
  if isinstance(y, tuple):
    return bool(y) and not all(isinstance(
        value, (numbers.Number, str, bytes, np.generic)) for value in y)
  return isinstance(y, list) and any(
      hasattr(value, "shape") and getattr(value, "ndim", 1) for value in y)


def examples_in(x):
  """The examples in fit's x (an array, a tensor, or a tuple or dict of
  them, as keras_inputs gives it), or None where they are not counted (a
  dataset, a generator)."""
  if isinstance(x, dict):
    x = next(iter(x.values()), None)
  elif isinstance(x, tuple):
    x = x[0] if x else None
  shape = getattr(x, "shape", None)
  if shape is None or not shape or shape[0] is None:
    return len(x) if isinstance(x, list) else None
  return int(shape[0])


def input_shape(x, name):
  """The shape of x's input `name` (x a dict of arrays or tensors), or
  None."""
  shape = getattr(x.get(name) if isinstance(x, dict) else None, "shape", None)
  return None if shape is None else tuple(shape)


def given(y, x, where, expected):
  """Whether there is a y to check before training: none where x is a
  dataset or a generator (which holds the targets), or where y is a dict
  keyed by output name.

  Raises:
    ValueError: y is None though x holds examples.
  """
  if y is None:
    if examples_in(x) is not None:
      raise ValueError(f"{where} is missing; expected {expected}")
    return False
  return not isinstance(y, dict)


def check_shape(y, x, shapes, where, expected):
  """Raises ValueError unless y (an array) has one of `shapes` (tuples,
  None for the examples' axis) and as many examples as x.

  Args:
    expected: what y holds, for the message ("[examples] of class ids").
  """
  examples = examples_in(x)
  fits = any(len(shape) == y.ndim and all(
      size in (None, actual) for size, actual in zip(shape, y.shape))
             for shape in shapes)
  if not fits:
    raise ValueError(f"{where} is shaped {list(y.shape)}; expected "
                     f"{expected}")
  if examples is not None and y.shape[0] != examples:
    raise ValueError(f"{where} holds {y.shape[0]} targets for {examples} "
                     "examples in x")


def numbers_of(y, where):
  """y (an array) as an array of finite numbers (an object array of
  numbers as floats), else a ValueError naming the first value that is
  not one."""
  if y.dtype.kind in "USO":
    odd = [value for value in y.flat
           if not isinstance(value, numbers.Real) or isinstance(value, bool)]
    if odd or y.dtype.kind != "O":
      raise ValueError(f"{where} holds {_plain((odd or list(y.flat))[0])!r}; "
                       "expected numbers")
    y = y.astype(float)
  if y.dtype.kind not in "biuf":
    raise ValueError(f"{where} is of dtype {y.dtype}; expected numbers")
  if y.dtype.kind == "f" and not np.isfinite(y).all():
    raise ValueError(f"{where} holds {_first(y, ~np.isfinite(y))}; expected "
                     "finite numbers")
  return y


def check_class_ids(y, x, where, count, what, shapes, layout, labels=None):
  """Raises ValueError unless y (where given) is shaped as one of `shapes`
  (see check_shape), with an entry per example of x, each a whole number
  from 0 to count - 1.

  Args:
    what: what an id picks, and from what, for messages ("class ids
      (num_labels=3)").
    layout: y's shape in words ("[examples]").
    labels: the names of the classes, where the model has them: a y of
      names is then told how to make ids of them.
  """
  if not given(y, x, where, f"{layout} of {what}"):
    return
  y = np.asarray(y)
  check_shape(y, x, shapes, where, f"{layout} of {what}")
  check_ids(y, count, where, what, labels)


def check_ids(y, count, where, what, labels=None):
  """Raises ValueError unless y (an array) holds whole numbers from 0 to
  count - 1 (what: as check_class_ids')."""
  if y.dtype.kind in "US" or (y.dtype.kind == "O" and y.size and all(
      isinstance(value, (str, bytes)) for value in y.flat)):
    raise ValueError(f"{where} holds strings ({_plain(y.flat[0])!r}, ...); "
                     f"expected {_ids(what, count)}" + _how_to_name(labels))
  y = numbers_of(y, where)
  wrong = (y < 0) | (y >= count)
  if y.dtype.kind == "f":
    wrong |= y != np.floor(y)
  if wrong.any():
    raise ValueError(f"{where} holds {_first(y, wrong)}; expected "
                     f"{_ids(what, count)}")


def _ids(what, count):
  """ "class ids (num_labels=3)" as "class ids 0 to 2 (num_labels=3)"."""
  name, _, detail = what.partition(" (")
  return f"{name} 0 to {count - 1}" + (f" ({detail}" if detail else "")


def check_values(y, x, where, shapes, layout, shares=False):
  """Raises ValueError unless y (where given) is shaped as one of `shapes`
  (see check_shape), with an entry per example of x, each a finite number
  (from 0 to 1 where shares: a sigmoid's targets).

  Args:
    layout: y's shape and values in words ("[examples] of numbers").
  """
  if not given(y, x, where, layout):
    return
  y = np.asarray(y)
  check_shape(y, x, shapes, where, layout)
  y = numbers_of(y, where)
  if shares and ((y < 0) | (y > 1)).any():
    raise ValueError(f"{where} holds {_first(y, (y < 0) | (y > 1))}; "
                     f"expected {layout}, each from 0 to 1")


def _how_to_name(labels):
  if labels is None:
    return "; the model names no labels"
  return (f": the model's labels are {list(labels)}, so pass "
          "[model.labels.index(label) for label in y]")


def _first(y, wrong):
  """The first value of y where the mask `wrong` holds."""
  return _plain(y[wrong].reshape(-1)[0])


def _plain(value):
  """A NumPy value as the Python one it holds, for messages."""
  return value.item() if isinstance(value, np.generic) else value
