"""Reading the model input dict, with errors that name the missing key."""

from keras import ops


def required_input(inputs, name, model_name):
  """inputs[name], or a ValueError that says which key is missing."""
  if not isinstance(inputs, dict):
    raise ValueError(f"{model_name} expects a dict of input tensors, got "
                     f"{type(inputs).__name__}")
  if name not in inputs:
    raise ValueError(f"{model_name} input is missing {name!r}; got keys "
                     f"{sorted(inputs)}")
  return inputs[name]


def optional_input(inputs, name, like, fill_value):
  """inputs[name], or a tensor shaped like `like` filled with fill_value.

  The original BertModel defaults input_mask to ones and token_type_ids to
  zeros; this keeps that behaviour.
  """
  value = inputs.get(name)
  if value is None:
    return ops.full(ops.shape(like), fill_value, dtype="int32")
  return value
