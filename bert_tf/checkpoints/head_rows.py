"""A checkpoint's head as a model that names its own labels loads it: the
rows taken by label name where the checkpoint holds them in another order,
or left out, with why, where its head has other labels or shapes
(load_weights then warns that the model's own starts at random)."""



class _HeadRows:
  """A reader whose head tensors come with their rows reordered (`rows`:
  the stored row of each of the model's), or are left out (rows None;
  `reason` says why, for load_weights' warning)."""

  def __init__(self, reader, head_names, rows, reason=None):
    self._reader, self._head_names, self._rows = reader, head_names, rows
    self.reason = reason

  def get_variable_to_shape_map(self):
    shapes = self._reader.get_variable_to_shape_map()
    return {name: shape for name, shape in shapes.items()
            if self._rows is not None or name not in self._head_names}

  def get_variable_to_dtype_map(self):
    return self._reader.get_variable_to_dtype_map()

  def get_tensor(self, name):
    value = self._reader.get_tensor(name)
    return value[self._rows] if name in self._head_names else value


def rows_by_label(reader, variables, labels, theirs):
  """The reader as a model of head labels `labels` loads it: where the
  checkpoint names its head's labels too (`theirs`: a Hugging Face
  folder's id2label, or the bert_config.json beside an original
  checkpoint) in another order, its rows are taken by name; another label
  set loads no head (the model keeps its own, a warning names both).

  Args:
    variables: the model's {original name: variable}; its head is the
      output_weights and output_bias among them.
    labels: the model's labels in row order, or None (rows as stored).
    theirs: the checkpoint's, or None where it names none.
  """
  if not labels:
    return reader
  head_names = [name for name in variables
                if name.endswith(("output_weights", "output_bias"))]
  shapes = reader.get_variable_to_shape_map()
  if theirs is None or list(theirs) == list(labels) or \
      not any(name in shapes for name in head_names):
    return reader
  if sorted(theirs) != sorted(labels):
    return _HeadRows(reader, head_names, None,
                     f"its head's labels {list(theirs)} are not the "
                     f"model's {list(labels)}")
  return _HeadRows(reader, head_names,
                   [list(theirs).index(label) for label in labels])


def without_other_heads(reader, variables, model, prefix):
  """The reader without the model's head variables that the checkpoint
  holds in another shape: the model keeps its own."""
  shapes = reader.get_variable_to_shape_map()
  other = [name for name in model.checkpoint_head_names
           if name in shapes and list(shapes[name]) != list(
               variables[name].shape)]
  if not other:
    return reader
  return _HeadRows(reader, other, None,
                   f"its head {_head_difference(other, shapes, variables)}")


def _head_difference(names, shapes, variables):
  """How a checkpoint's head variables `names` differ from the model's:
  in the number of labels (output_weights' rows), else in shapes."""
  weights = [name for name in names if name.endswith("output_weights")
             and shapes[name][0] != variables[name].shape[0]]
  if weights:
    stored, own = list(shapes[weights[0]]), list(variables[weights[0]].shape)
    return (f"has {stored[0]} label{'s' * (stored[0] != 1)} and the "
            f"model's {own[0]} ({weights[0]} {stored} against {own})")
  more = f" ({len(names) - 1} more differ)" if len(names) > 1 else ""
  return (f"is of other shapes: {names[0]} {list(shapes[names[0]])} "
          f"against the model's {list(variables[names[0]].shape)}{more}")
