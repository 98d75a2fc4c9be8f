"""Features from an encoder's layers: chosen, concatenated or mixed.

The paper's feature-based experiments (§5.3, Table 7) feed a tagger with
the embeddings, one hidden layer, the last four concatenated, or a learned
weighted sum of several layers. The same layer choice serves
extract_features' --layers; this module is the one place it is made.

Layers are named as the original's all_encoder_layers indexes them
(0 .. num_layers - 1, or -1 for the last), plus "embeddings" for the
embedding output.
"""

import keras
from keras import ops

EMBEDDINGS = "embeddings"
CONCAT = "concat"
WEIGHTED_SUM = "weighted_sum"

# The paper's Table 7 variants: (layers, how they are combined).
FEATURE_CHOICES = {
    "embeddings": ((EMBEDDINGS,), CONCAT),
    "second_to_last_hidden": ((-2,), CONCAT),
    "last_hidden": ((-1,), CONCAT),
    "weighted_sum_last_four": ((-4, -3, -2, -1), WEIGHTED_SUM),
    "concat_last_four": ((-1, -2, -3, -4), CONCAT),
    # "Weighted Sum All 12 Layers": every encoder layer, not the embeddings.
    "weighted_sum_all": (None, WEIGHTED_SUM),
}


def feature_layers(choice, num_layers):
  """(layers, combination) of a FEATURE_CHOICES name for an encoder of
  num_layers layers.

  Raises:
    ValueError: an unknown choice, or layers the encoder does not have.
  """
  check_feature_choice(choice)
  layers, combination = FEATURE_CHOICES[choice]
  if layers is None:
    layers = tuple(range(num_layers))
  check_layers(layers, num_layers, f"--feature_based={choice}")
  return layers, combination


def check_feature_choice(choice):
  """Raises ValueError for a name FEATURE_CHOICES lacks."""
  if choice not in FEATURE_CHOICES:
    raise ValueError(f"--feature_based={choice}: expected one of "
                     f"{', '.join(FEATURE_CHOICES)}")


def check_layers(layers, num_layers, what):
  """Raises ValueError, naming `what`, for a layer the encoder lacks."""
  for layer in layers:
    if layer != EMBEDDINGS and not -num_layers <= layer < num_layers:
      raise ValueError(f"{what}: layer {layer} does not exist in a model "
                       f"of {num_layers} layers (valid: -{num_layers} .. "
                       f"{num_layers - 1})")


def select_layers(encoder_outputs, layers):
  """The chosen [batch, seq, hidden] tensors from a BertEncoder's outputs,
  in `layers` order."""
  return [encoder_outputs["embedding_output"] if layer == EMBEDDINGS
          else encoder_outputs["all_encoder_layers"][layer]
          for layer in layers]


@keras.saving.register_keras_serializable(package="bert_tf")
class LayerCombination(keras.layers.Layer):
  """The chosen layers concatenated on the hidden axis, or their weighted
  sum with softmax-normalised weights and a scale (ELMo's scalar mix),
  learned: weights start equal, the scale at 1.

  Args:
    selected_layers: layer names (see the module docstring).
    combination: CONCAT or WEIGHTED_SUM.

  Call: a BertEncoder's outputs dict -> [batch, seq, hidden * k] for
    concatenation of k layers, [batch, seq, hidden] for a weighted sum.
  """

  def __init__(self, selected_layers, combination=CONCAT, **kwargs):
    super().__init__(**kwargs)
    if combination not in (CONCAT, WEIGHTED_SUM):
      raise ValueError(f"combination {combination!r}: expected {CONCAT} or "
                       f"{WEIGHTED_SUM}")
    self.selected_layers = tuple(selected_layers)
    self.combination = combination

  def build(self, input_shape=None):
    if self.combination == WEIGHTED_SUM:
      self.layer_weights = self.add_weight(
          name="layer_weights", shape=(len(self.selected_layers),),
          initializer="zeros")
      self.scale = self.add_weight(name="scale", shape=(),
                                   initializer="ones")
    self.built = True

  def call(self, encoder_outputs):
    chosen = select_layers(encoder_outputs, self.selected_layers)
    if self.combination == CONCAT:
      return chosen[0] if len(chosen) == 1 else ops.concatenate(chosen, -1)
    weights = ops.cast(ops.softmax(self.layer_weights), chosen[0].dtype)
    mixed = sum(weights[index] * layer for index, layer in enumerate(chosen))
    return ops.cast(self.scale, mixed.dtype) * mixed

  def get_config(self):
    config = super().get_config()
    config.update(selected_layers=list(self.selected_layers), combination=self.combination)
    return config
