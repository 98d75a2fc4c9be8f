"""LayerOutputs: the encoder's chosen layers, as extract_features and its
export give them."""

import tensorflow as tf

from bert_tf.layers.layer_combination import select_layers
from bert_tf.models.encoder import EncoderModel


class LayerOutputs(EncoderModel):
  """The encoder's selected layers: {"layer_output_<k>": [batch, seq,
  hidden]} in `selected_layers` order, as the original's predictions."""

  checkpoint_head_names = {}
  config_arguments = ("selected_layers",)

  def __init__(self, config, selected_layers, **kwargs):
    super().__init__(config, **kwargs)
    self.selected_layers = tuple(selected_layers)
    self.built = True

  def call(self, inputs, training=None):
    chosen = select_layers(self.encoder(inputs, training=False),
                           self.selected_layers)
    return {f"layer_output_{k}": tf.cast(layer, tf.float32)
            for k, layer in enumerate(chosen)}
