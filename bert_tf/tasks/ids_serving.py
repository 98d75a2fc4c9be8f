"""The ids signature of tasks served from ids alone: run_squad's logits,
run_ner's tag probabilities, run_swag's choice probabilities; and the id
checks every export's signatures make."""

import tensorflow as tf

ENCODER_INPUTS = ("input_ids", "input_mask", "segment_ids")


def checked_ids(inputs, config):
  """The encoder inputs of a request, once every id is checked to index
  its embedding table: a negative id, an input id of vocab_size or more,
  or a segment id of type_vocab_size or more fails the request with an
  InvalidArgumentError naming the field, where the lookup would wrap
  around the table (or, on a GPU, silently read zeros). Core ops only."""
  checks = []
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
      or the shape ids_serving is given) -> the model's outputs named by
      output_names; ids outside the model's tables are refused
      (checked_ids). Core TensorFlow ops only: stock TF Serving runs it.
  """

  def __init__(self, model, output_names):
    super().__init__()
    self.model = model
    self.output_names = tuple(output_names)

  def predict(self, inputs):
    outputs = self.model(checked_ids(inputs, self.model.config),
                         training=False)
    return {name: outputs[name] for name in self.output_names}


def ids_serving(model, output_names, ids_shape=(None, None)):
  """(IdsServing, its signatures) for export.write_saved_model; the ids
  are int32 of ids_shape (SWAG's: [batch, 4, seq])."""
  serving = IdsServing(model, output_names)
  id_spec = tf.TensorSpec(list(ids_shape), tf.int32)

  @tf.function(input_signature=[id_spec] * 3)
  def serving_default(input_ids, input_mask, segment_ids):
    return serving.predict({"input_ids": input_ids, "input_mask": input_mask,
                            "segment_ids": segment_ids})

  return serving, {"serving_default": serving_default}
