"""BertPretrainer: the encoder plus the masked-LM and next-sentence heads."""

import keras
from keras import ops

from bert_tf.layers.classification_head import ClassificationHead
from bert_tf.layers.masked_lm import MaskedLMHead
from bert_tf.models.encoder import EncoderModel
from bert_tf.models.inputs import required_input


@keras.saving.register_keras_serializable(package="bert_tf")
class BertPretrainer(EncoderModel):
  """The pretraining model of the original run_pretraining.py.

  Args:
    config: a BertConfig (or its dict).

  Inputs: the encoder's dict plus
    masked_lm_positions: int32 [batch_size, num_predictions].

  Outputs: the encoder's dict plus
    masked_lm_logits: [batch_size, num_predictions, vocab_size], float32.
    masked_lm_log_probs: their log_softmax.
    next_sentence_log_probs: [batch_size, 2]; class 0 is "IsNext".

  Example:
    >>> from bert_tf.config import BertConfig
    >>> config = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=2,
    ...                     num_attention_heads=2, intermediate_size=32)
    >>> model = BertPretrainer(config)
    >>> out = model({"input_ids": ops.ones((1, 4), "int32"),
    ...              "masked_lm_positions": ops.array([[1, 2]], "int32")})
    >>> out["masked_lm_log_probs"].shape
    TensorShape([1, 2, 50])
  """

  # Original checkpoint name -> attribute path (see bert_tf.checkpoints).
  checkpoint_head_names = {
      "cls/predictions/transform/dense/kernel":
          "masked_lm_head.transform_dense.kernel",
      "cls/predictions/transform/dense/bias":
          "masked_lm_head.transform_dense.bias",
      "cls/predictions/transform/LayerNorm/gamma":
          "masked_lm_head.transform_layer_norm.gamma",
      "cls/predictions/transform/LayerNorm/beta":
          "masked_lm_head.transform_layer_norm.beta",
      "cls/predictions/output_bias": "masked_lm_head.output_bias",
      "cls/seq_relationship/output_weights":
          "next_sentence_head.output_weights",
      "cls/seq_relationship/output_bias": "next_sentence_head.output_bias",
  }

  # save_pretrained's classes: both heads, or (architecture=) the masked-LM
  # one alone, without the pooler.
  huggingface_architectures = ("BertForPreTraining", "BertForMaskedLM")

  input_ranks = {**EncoderModel.input_ranks, "masked_lm_positions": 2}

  def __init__(self, config, **kwargs):
    super().__init__(config, **kwargs)
    config = self.config
    self.masked_lm_head = MaskedLMHead(
        vocab_size=config.vocab_size,
        hidden_size=config.hidden_size,
        hidden_act=config.hidden_act,
        initializer_range=config.initializer_range,
        layer_norm_epsilon=config.layer_norm_eps,
        name="predictions")
    self.next_sentence_head = ClassificationHead(
        num_classes=2, initializer_range=config.initializer_range,
        name="seq_relationship")
    self.build()

  def build(self, input_shape=None):
    self.masked_lm_head.build()
    self.next_sentence_head.build((None, self.config.hidden_size))
    self.built = True

  def call(self, inputs, training=None):
    masked_lm_positions = required_input(inputs, "masked_lm_positions",
                                         type(self).__name__)
    outputs = dict(self.encoder(inputs, training=training))
    outputs["masked_lm_logits"] = self.masked_lm_head(
        outputs["sequence_output"], masked_lm_positions,
        self.encoder.embedding_table)
    outputs["masked_lm_log_probs"] = ops.log_softmax(
        outputs["masked_lm_logits"], axis=-1)
    next_sentence_logits = self.next_sentence_head(outputs["pooled_output"])
    outputs["next_sentence_log_probs"] = ops.log_softmax(
        ops.cast(next_sentence_logits, "float32"), axis=-1)
    return outputs

  def target_output(self, outputs):
    """(masked_lm_log_probs, next_sentence_log_probs), for targets
    (masked_lm_ids, next_sentence_labels); log-probabilities are their own
    logits, so from_logits=True losses apply."""
    return (outputs["masked_lm_log_probs"],
            outputs["next_sentence_log_probs"])
