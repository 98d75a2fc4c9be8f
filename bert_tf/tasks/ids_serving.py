"""The ids signature of tasks served from ids alone: run_squad's logits,
run_ner's tag probabilities, run_swag's choice probabilities."""

import tensorflow as tf

ENCODER_INPUTS = ("input_ids", "input_mask", "segment_ids")


class IdsServing(tf.Module):
  """A model for export.

  serving_default(input_ids, input_mask, segment_ids: int32 [batch, seq],
      or the shape ids_serving is given) -> the model's outputs named by output_names. Core TensorFlow ops
      only: stock TF Serving runs it.
  """

  def __init__(self, model, output_names):
    super().__init__()
    self.model = model
    self.output_names = tuple(output_names)

  def predict(self, inputs):
    outputs = self.model({name: inputs[name] for name in ENCODER_INPUTS},
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
