"""A model's arguments checked where they are given, each refusal one line
naming the argument: a size that is not a whole number builds a layer that
fails only at its first batch, and a .keras config's lora builds adapters
Keras would load nothing into."""

import numbers

from bert_tf.checkpoints.names import first_repeated


def check_positive_int(value, name, model_name):
  """Raises ValueError, naming the argument, unless value is an integer
  >= 1: a head of 0 units is built, and fails only at its first batch."""
  if (isinstance(value, bool) or not isinstance(value, numbers.Integral)
      or value < 1):
    raise ValueError(f"{model_name}: {name}={value!r} must be an integer "
                     ">= 1")


def check_labels(labels, num_labels, model_name):
  """Raises ValueError unless labels is None or a list naming each of the
  num_labels rows of the head once (as a folder writes it: a string, so 1
  and "1" are one label)."""
  if labels is None:
    return
  if isinstance(labels, (str, bytes)):
    raise ValueError(f"{model_name}: labels={labels!r}; expected a list of "
                     f"the head's {num_labels} labels")
  if len(labels) != num_labels:
    raise ValueError(f"{model_name}: {len(labels)} labels for "
                     f"num_labels={num_labels}")
  if None in labels:
    raise ValueError(f"{model_name}: labels[{list(labels).index(None)}] is "
                     f"None; a label is a name (a string) or a number")
  repeated = first_repeated(labels)
  if repeated is not None:
    raise ValueError(f"{model_name}: labels name {repeated!r} twice; each "
                     f"of the head's rows has a label of its own")


def check_lora_config(adapters, model_name):
  """Raises ValueError unless a config's lora is None or enable_lora's
  arguments (rank, and targets and alpha or not), and new_weights or not:
  a list of the weight paths that train beside the adapters."""
  if adapters is not None and (
      not isinstance(adapters, dict) or "rank" not in adapters
      or set(adapters) - {"rank", "targets", "alpha", "new_weights"}
      or not _is_list_of_str(adapters.get("new_weights", []))):
    raise ValueError(f"{model_name} config: lora={adapters!r}; expected "
                     "enable_lora's arguments: rank, targets, alpha (and "
                     "new_weights, a list of weight paths)")


def _is_list_of_str(value):
  return isinstance(value, list) and all(isinstance(item, str)
                                         for item in value)
