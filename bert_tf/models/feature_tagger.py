"""BertFeatureTagger: run_ner's feature-based tagger, as the paper's
CoNLL-2003 experiments (§5.3): the encoder frozen, a BiLSTM over chosen
layers."""

import keras
from keras import ops

from bert_tf.layers.classification_head import ClassificationHead
from bert_tf.layers.layer_combination import (CONCAT, WEIGHTED_SUM,
                                               LayerCombination, check_layers)
from bert_tf.models.argument_checks import check_positive_int
from bert_tf.models.encoder import EncoderModel
from bert_tf.models.tagger import check_tags, tag_outputs
from bert_tf.objectives.tagging import TaggingObjective


@keras.saving.register_keras_serializable(package="bert_tf")
class BertFeatureTagger(EncoderModel):
  """The paper's feature-based tagger: the encoder frozen (not trained, run
  without dropout), chosen layers of it combined (LayerCombination), a
  randomly initialised two-layer BiLSTM over the real tokens, and a dense
  layer per position.

  Checkpoint head (under ner/): layer_weights and layer_scale for a
  weighted sum; bilstm_<k>/<fw|bw>/{kernel, recurrent_kernel, bias} for
  each BiLSTM layer k (Keras' LSTM layout, gates i, f, c, o); output_weights
  and output_bias. The encoder keeps its bert/ names, and its values are
  those it was loaded with.

  Args:
    config: a BertConfig (or its dict).
    num_labels: the number of tags.
    selected_layers, combination: as LayerCombination.
    lstm_units: each direction's LSTM size (the paper's 768).

  Inputs: the encoder's dict. Outputs: as BertTagger.
  """

  config_arguments = ("num_labels", "selected_layers", "combination",
                      "lstm_units")
  objective = TaggingObjective()

  def __init__(self, config, num_labels, selected_layers, combination,
               lstm_units=768, **kwargs):
    super().__init__(config, **kwargs)
    name = type(self).__name__
    check_positive_int(num_labels, "num_labels", name)
    check_positive_int(lstm_units, "lstm_units", name)
    if not selected_layers:
      raise ValueError(f"{name}: selected_layers is empty")
    check_layers(selected_layers, self.config.num_hidden_layers,
                 f"{name} selected_layers")
    self.num_labels = num_labels
    self.selected_layers = tuple(selected_layers)
    self.combination = combination
    self.lstm_units = lstm_units
    self.encoder.trainable = False
    self.layer_combination = LayerCombination(
        selected_layers, combination, name="layer_combination")
    self.bilstms = [
        keras.layers.Bidirectional(
            keras.layers.LSTM(lstm_units, return_sequences=True),
            name=f"bilstm_{index}") for index in range(2)]
    self.tag_head = ClassificationHead(
        num_classes=num_labels, initializer_range=self.config.initializer_range,
        name="ner")
    self.build()

  @property
  def checkpoint_head_names(self):
    names = {"ner/output_weights": "tag_head.output_weights",
             "ner/output_bias": "tag_head.output_bias"}
    if self.combination == WEIGHTED_SUM:
      names["ner/layer_weights"] = "layer_combination.layer_weights"
      names["ner/layer_scale"] = "layer_combination.scale"
    for index in range(len(self.bilstms)):
      for short, direction in (("fw", "forward_layer"),
                               ("bw", "backward_layer")):
        for weight in ("kernel", "recurrent_kernel", "bias"):
          names[f"ner/bilstm_{index}/{short}/{weight}"] = (
              f"bilstms.{index}.{direction}.cell.{weight}")
    return names

  def build(self, input_shape=None):
    hidden = self.config.hidden_size
    width = hidden * (len(self.selected_layers)
                      if self.combination == CONCAT else 1)
    self.layer_combination.build()
    for bilstm in self.bilstms:
      bilstm.build((None, None, width))
      width = 2 * self.lstm_units
    self.tag_head.build((None, None, width))
    self.built = True

  def check_targets(self, x, y, where):
    check_tags(self, x, y, where)

  def text_advice(self):
    return ("its BiLSTM takes the encoder's ids alone; a BertTagger takes "
            "raw text (BertTagger.from_pretrained(model_dir))")

  def call(self, inputs, training=None):
    encoder_outputs = self.encoder(inputs, training=False)
    features = self.layer_combination(encoder_outputs)
    mask = None
    if inputs.get("input_mask") is not None:
      mask = ops.cast(inputs["input_mask"], "bool")
    for bilstm in self.bilstms:
      features = bilstm(features, mask=mask, training=training)
    return tag_outputs(self.tag_head, features)
