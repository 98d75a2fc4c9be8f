"""How much work TensorFlow code does, counted without timing it: the
elements of the largest tensor any of its ops makes, so a test can tell
work that grows with the square of its input from work that grows with it
on any machine."""

from tensorflow.python.framework import op_callbacks


def largest_tensor(function):
  """(function()'s result, the most elements of any tensor an op made
  while it ran). The function must run eagerly: a tf.function's ops are
  counted only as its outputs."""
  largest = 0

  def record(op_type, inputs, attrs, outputs, op_name=None, graph=None):
    del op_type, inputs, attrs, op_name
    nonlocal largest
    if graph is None:
      for output in outputs:
        largest = max(largest, output.shape.num_elements())

  op_callbacks.add_op_callback(record)
  try:
    result = function()
  finally:
    op_callbacks.remove_op_callback(record)
  return result, largest
