"""BertPretrainer: the encoder plus the masked-LM and next-sentence heads."""

import keras
import tensorflow as tf
from keras import ops

from bert_tf.layers.classification_head import ClassificationHead
from bert_tf.layers.masked_lm import MaskedLMHead
from bert_tf.models import fit_plan
from bert_tf.models.inputs import required_input
from bert_tf.models.text_model import TextModel
from bert_tf.text.masked_lm_preprocessor import BertMaskedLMPreprocessor
from bert_tf.text.preprocessor import as_keras_texts


@keras.saving.register_keras_serializable(package="bert_tf")
class BertPretrainer(TextModel):
  """The pretraining model of the original run_pretraining.py.

  Args:
    config: a BertConfig (or its dict).
    preprocessor: None, or a BertMaskedLMPreprocessor: then fit and
      evaluate take raw text too (a list of strings, or a string array),
      masked as create_pretraining_data masks, with new masks each epoch
      (validation_data's stay the same): masked-LM training on domain
      text. No gradient reaches the next-sentence head from single texts.

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

  input_ranks = {**TextModel.input_ranks, "masked_lm_positions": 2}

  preprocessor_class = BertMaskedLMPreprocessor

  def __init__(self, config, preprocessor=None, **kwargs):
    super().__init__(config, preprocessor, **kwargs)
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

  def input_signature(self):
    # Masked positions come with the ids: text is masked in fit alone.
    return self.ids_input_signature()

  def compile_defaults(self):
    """run_pretraining's loss: the masked-LM cross-entropy averaged over
    the real predictions (masked_lm_weights as sample weights), plus the
    next-sentence cross-entropy."""
    return ((keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, reduction="mean_with_sample_weight"),
             keras.losses.SparseCategoricalCrossentropy(from_logits=True)),
            None)

  def fit(self, x=None, y=None, batch_size=None, epochs=1, **kwargs):
    texts = self._texts(x, "fit")
    if texts is None:
      return super().fit(x, y, batch_size, epochs, **kwargs)
    if y is not None or "validation_split" in kwargs:
      raise ValueError(f"{type(self).__name__}.fit on text takes no y (the "
                       "targets are the masked tokens) nor validation_split "
                       "(pass validation_data)")
    batch_size = batch_size or fit_plan.KERAS_BATCH_SIZE
    validation_texts = self._texts(kwargs.get("validation_data"), "fit")
    if validation_texts is not None:
      kwargs["validation_data"] = self._masked_batches(
          validation_texts, batch_size, new_masks=False)
    batches = self._masked_batches(texts, batch_size, new_masks=True,
                                   shuffle=kwargs.pop("shuffle", True))
    return super().fit(batches, epochs=epochs, shuffle=False, **kwargs)

  def evaluate(self, x=None, y=None, batch_size=None, **kwargs):
    texts = self._texts(x, "evaluate")
    if texts is None:
      return super().evaluate(x, y, batch_size, **kwargs)
    return super().evaluate(self._masked_batches(
        texts, batch_size or fit_plan.KERAS_BATCH_SIZE, new_masks=False),
                            **kwargs)

  def predict(self, x, *args, **kwargs):
    if self._texts(x, "predict") is not None:
      raise ValueError(f"{type(self).__name__}.predict takes ids with "
                       "masked_lm_positions; bert_tf.fill_mask(model, text) "
                       "fills a text's [MASK]s")
    return super().predict(x, *args, **kwargs)

  def _texts(self, x, method):
    """x as a string tensor where it is text that the masking preprocessor
    takes, else None (one bare string is refused: see TextModel)."""
    if self.preprocessor is None or x is None:
      return None
    self._check_not_bare_text(x, method)
    texts = as_keras_texts(x)
    if isinstance(texts, tf.Tensor) and texts.dtype == tf.string:
      return texts
    return None

  def _masked_batches(self, texts, batch_size, new_masks, shuffle=False):
    """A dataset of masked batches of texts (a string tensor): masks drawn
    anew each epoch where new_masks, else the same each time."""
    texts = tf.data.Dataset.from_tensor_slices(texts)
    if shuffle:
      texts = texts.shuffle(int(texts.cardinality()),
                            reshuffle_each_iteration=True)
    seeds = tf.data.Dataset.random(
        rerandomize_each_iteration=new_masks).batch(2)
    return tf.data.Dataset.zip(texts.batch(batch_size), seeds).map(
        self.preprocessor.masked)

  def target_output(self, outputs):
    """(masked_lm_log_probs, next_sentence_log_probs), for targets
    (masked_lm_ids, next_sentence_labels); log-probabilities are their own
    logits, so from_logits=True losses apply."""
    return (outputs["masked_lm_log_probs"],
            outputs["next_sentence_log_probs"])
