"""What every bert_tf model adds to keras.Model: a config of its
BertConfig, quantize() limited to what keeps the outputs right and saved
with the model, and export() with the model's own inputs."""

import keras
import tensorflow as tf

# Measured on a classifier fine-tuned on SST-2 (benchmarks/quantization.py,
# docs/keras.md): each keeps over 99.7% of the float model's predictions.
# GPTQ and AWQ are refused: they need calibration data and a description of
# the model's blocks (get_quantization_layer_structure) that bert_tf does
# not give.
QUANTIZATION_MODES = ("int8", "int4", "float8")

ENCODER_INPUTS = ("input_ids", "input_mask", "segment_ids")


def _is_dense(layer):
  return isinstance(layer, keras.layers.Dense)


def flat_outputs(outputs):
  """A model's output dict with each list (the encoder's
  all_encoder_layers) as one entry per item, "<name>_<index>": ONNX and
  LiteRT name each output, and a list has no name."""
  flat = {}
  for name, value in outputs.items():
    if isinstance(value, (list, tuple)):
      flat.update({f"{name}_{index}": item for index, item in enumerate(value)})
    else:
      flat[name] = value
  return flat


class _FlatOutputs(keras.Model):
  """A model called in inference mode, its outputs flattened."""

  def __init__(self, model):
    super().__init__(name=model.name)
    self.model = model
    self.built = True

  def call(self, inputs):
    return flat_outputs(self.model(inputs, training=False))


class BertKerasModel(keras.Model):
  """A keras.Model built from a BertConfig (`self.config`, stored by
  get_config), whose quantize() covers its Dense layers (the attention
  projections, the feed-forward layers, the pooler, the masked-LM
  transform) and refuses GPTQ and AWQ, and whose export() needs no input
  signature.

  Word embeddings stay float: the masked-LM head multiplies by the same
  table. So do the classification heads, whose weights keep the original's
  [num_classes, width] layout.
  """

  # int32 ids of rank 2 ([batch_size, seq_length]) for each name.
  input_ranks = {name: 2 for name in ENCODER_INPUTS}

  # The mode quantize() was given, kept in get_config: from_config
  # quantizes the new model the same way, so that a .keras file's quantized
  # weights find the variables they were saved from.
  quantized_to = None

  def input_signature(self):
    """[{name: TensorSpec}]: the inputs export() gives the model."""
    return [{name: tf.TensorSpec([None] * rank, tf.int32, name=name)
             for name, rank in self.input_ranks.items()}]

  def quantize(self, mode=None, config=None, filters=None, **kwargs):
    if mode not in QUANTIZATION_MODES:
      raise ValueError(
          f"{type(self).__name__}.quantize({mode!r}): bert_tf models "
          f"support {', '.join(map(repr, QUANTIZATION_MODES))}")
    super().quantize(mode, config=config, filters=filters or _is_dense,
                     **kwargs)
    self.quantized_to = mode

  def get_config(self):
    config = super().get_config()
    config["config"] = self.config.to_dict()
    if self.quantized_to:
      config["quantized_to"] = self.quantized_to
    return config

  @classmethod
  def from_config(cls, config):
    arguments = dict(config)
    mode = arguments.pop("quantized_to", None)
    model = cls(**cls.constructor_arguments(arguments))
    if mode:
      model.quantize(mode)
    return model

  @classmethod
  def constructor_arguments(cls, config):
    """The constructor's arguments from get_config's dict (a subclass
    deserialises what it serialised)."""
    return config

  def export(self, filepath, format="tf_saved_model", verbose=None,
             input_signature=None, **kwargs):
    """keras.Model.export ("tf_saved_model", "onnx", "litert", ...) with
    input_signature defaulting to the model's own, in inference mode, with
    list outputs flattened (see flat_outputs)."""
    return keras.Model.export(
        _FlatOutputs(self), filepath, format=format, verbose=verbose,
        input_signature=input_signature or self.input_signature(), **kwargs)
