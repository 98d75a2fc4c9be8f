"""What every task's export shares: the ids signature (serving_default,
core TensorFlow ops only, so any TF Serving runs it) with its checks on the
ids, and the checks on a raw-text signature's strings."""

import tensorflow as tf

from bert_tf.models.base import ENCODER_INPUTS


def checked_ids(inputs, config):
  """The encoder inputs of a request, once every id is checked to index
  its embedding table: a negative id, an input id of vocab_size or more,
  or a segment id of type_vocab_size or more fails the request with an
  InvalidArgumentError naming the field, where the lookup would wrap
  around the table (or, on a GPU, silently read zeros); so do sequences
  of no positions (the pooler reads the first). An empty batch is
  answered with empty outputs. Core ops only."""
  checks = [tf.debugging.assert_positive(
      tf.shape(inputs["input_ids"])[-1],
      message="input_ids: sequences must have at least one position")]
  for name, size, table in (
      ("input_ids", config.vocab_size, "vocab_size"),
      ("segment_ids", config.type_vocab_size, "type_vocab_size")):
    ids = inputs[name]
    checks.append(tf.debugging.assert_non_negative(
        ids, message=f"{name}: ids must be 0 or more"))
    checks.append(tf.debugging.assert_less(
        ids, tf.constant(size, ids.dtype),
        message=f"{name}: ids must be less than the model's {table} "
                f"({size})"))
  with tf.control_dependencies(checks):
    return {name: tf.identity(inputs[name]) for name in ENCODER_INPUTS}


class IdsServing(tf.Module):
  """A model for export.

  serving_default(input_ids, input_mask, segment_ids: int32 [batch, seq],
      or the shape ids_signatures is given) -> the model's outputs named by
      output_names; ids outside the model's tables are refused
      (checked_ids). Core TensorFlow ops only: stock TF Serving runs it.
  """

  def __init__(self, model, output_names):
    super().__init__()
    self._hold_untracked(model)
    self.output_names = tuple(output_names)
    # The TensorFlow variables under the Keras ones are what the export
    # saves: a SavedModel holding Keras 3 variables cannot be loaded by TF
    # Serving or `saved_model_cli run` ("Could not find variable ...":
    # keras-team/keras#20095, tensorflow/serving#2250), whose loader
    # restores these. The model itself is not tracked, or every weight
    # would be saved twice, once under each; nor are its dropout seeds,
    # which inference does not use.
    self.tf_variables = [weight.value for weight in model.weights]

  @tf.__internal__.tracking.no_automatic_dependency_tracking
  def _hold_untracked(self, model):
    self.model = model

  def predict(self, inputs):
    outputs = self.model(checked_ids(inputs, self.model.config),
                         training=False)
    return {name: outputs[name] for name in self.output_names}


def ids_signatures(serving, ids_shape=(None, None)):
  """{"serving_default": serving.predict on int32 ids of ids_shape} (SWAG's
  are [batch, 4, seq]); ids of another shape are refused naming the
  field (checked_shapes)."""
  id_spec = tf.TensorSpec(list(ids_shape), tf.int32)
  sizes = tuple("batch" if axis == 0 else "seq_length" if size is None
                else size for axis, size in enumerate(ids_shape))

  @tf.function(input_signature=[id_spec] * 3)
  def serving_default(input_ids, input_mask, segment_ids):
    return serving.predict(checked_shapes(
        {"input_ids": input_ids, "input_mask": input_mask,
         "segment_ids": segment_ids},
        dict.fromkeys(ENCODER_INPUTS, sizes)))

  return {"serving_default": serving_default}


def checked_texts(texts, offsets=False, shapes=None):
  """A raw-text request's strings, once checked like a server would.

  Args:
    texts: {input name: string tensor}, the first the reference.
    offsets: the answer is character offsets, so the strings must be valid
      UTF-8 (elsewhere invalid bytes are dropped, as the original does).
    shapes: {input name: shape} as checked_shapes takes them, for inputs
      that are not [batch].

  Returns:
    The same dict; running it fails the request with an
    InvalidArgumentError naming the field if a tensor is not of its shape,
    or (offsets) a string is not valid UTF-8. An empty batch passes: it is
    answered with empty outputs.
  """
  texts = checked_shapes(texts, {name: (shapes or {}).get(name, ("batch",))
                                 for name in texts})
  checks = []
  for name in texts if offsets else ():
    # Assert, not assert_equal: that would copy the bytes into the message,
    # which a client then fails to decode.
    checks.append(tf.debugging.Assert(tf.reduce_all(tf.equal(
        tf.strings.unicode_transcode(texts[name], "UTF-8", "UTF-8",
                                     errors="ignore"), texts[name])),
        [f"{name}: not valid UTF-8"]))
  with tf.control_dependencies(checks):
    return {name: tf.identity(value) for name, value in texts.items()}


def checked_shapes(tensors, shapes):
  """The tensors of a request, once each is checked to have its shape.

  A loaded signature runs on a tensor of any shape (its TensorSpec is not
  enforced, and a Rank op folds to the spec's rank), and a wrong one would
  fail far inside the model naming no field. So the shape is read at run
  time, padded with -1 past the tensor's rank.

  Args:
    tensors: {name: tensor}.
    shapes: {name: sizes}: an int is a fixed size; a name ("batch",
      "seq_length") is a size every tensor naming it shares, the first's.

  Returns:
    The same dict; running it fails the request with an
    InvalidArgumentError ("input_mask: must be [batch, seq_length], batch
    and seq_length as in input_ids") for the first tensor of another shape.
  """
  named = {}  # size name -> (the first tensor naming it, that size)
  checks = []
  for name, tensor in tensors.items():
    shape = shapes[name]
    dims = tf.concat([tf.shape(tensor, out_type=tf.int64),
                      -tf.ones([len(shape) + 1], tf.int64)], 0)
    expected, shared = [], []
    for axis, size in enumerate(shape):
      if isinstance(size, int):
        expected.append(tf.constant(size, tf.int64))
      elif size in named:
        expected.append(named[size][1])
        shared.append(size)
      else:
        named[size] = (name, dims[axis])
        expected.append(tf.maximum(dims[axis], 0))
    expected.append(tf.constant(-1, tf.int64))
    message = f"{name}: must be [{', '.join(map(str, shape))}]"
    if shared:
      message += (f", {' and '.join(shared)} as in "
                  f"{named[shared[0]][0]}")
    with tf.control_dependencies(checks):
      checks.append(tf.debugging.Assert(tf.reduce_all(tf.equal(
          dims[:len(shape) + 1], tf.stack(expected))), [message]))
  with tf.control_dependencies(checks):
    return {name: tf.identity(value) for name, value in tensors.items()}

