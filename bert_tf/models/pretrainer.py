"""BertPretrainer: the encoder plus the masked-LM and next-sentence heads."""

import math

import keras
import tensorflow as tf
from keras import ops

from bert_tf.layers.classification_head import ClassificationHead
from bert_tf.layers.masked_lm import MaskedLMHead
from bert_tf.models import fit_plan, targets
from bert_tf.models.argument_checks import check_positive_int
from bert_tf.models.inputs import required_input
from bert_tf.models.text_model import TextModel
from bert_tf.objectives.pretraining import PretrainingObjective
from bert_tf.text.masked_lm_preprocessor import BertMaskedLMPreprocessor
from bert_tf.text.preprocessor import as_keras_texts

# The first half of each validation text's masking seed; its position in the
# texts is the second.
_FIXED_MASKS_SEED = 20181011


@keras.saving.register_keras_serializable(package="bert_tf")
class BertPretrainer(TextModel):
  """The pretraining model of the original run_pretraining.py.

  Args:
    config: a BertConfig (or its dict).
    preprocessor: None, or a BertMaskedLMPreprocessor: then fit and
      evaluate take raw single texts too (a list of strings, or a string
      array), masked as create_pretraining_data masks, with new masks each
      epoch in fit (validation_data's and evaluate's the same on every
      call): masked-LM training on domain text. No gradient reaches the
      next-sentence head from single texts.

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

  objective = PretrainingObjective()

  def __init__(self, config, *, preprocessor=None, **kwargs):
    super().__init__(config, preprocessor=preprocessor, **kwargs)
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
    """No compiled loss: compute_loss gives run_pretraining's."""
    return None, None

  def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None,
                   training=True):
    """run_pretraining's loss where compile() was given none: the masked-LM
    cross-entropy over the real predictions (masked_lm_weights) plus the
    next-sentence cross-entropy, weighted by its sample weights where
    given (0 for single texts, which have no next sentence to learn). One
    number, so fit and evaluate show only the loss that trains."""
    if self.loss is not None:
      return super().compute_loss(x, y, y_pred, sample_weight, training)
    masked_lm_ids, next_sentence_labels = y
    if sample_weight is None:
      sample_weight = (ops.ones_like(masked_lm_ids, "float32"), None)
    elif not isinstance(sample_weight, (tuple, list)):
      raise ValueError(f"{type(self).__name__}: sample_weight is one "
                       "array; expected (masked_lm_weights, "
                       "next_sentence_weights)")
    masked_lm_weights, next_sentence_weights = sample_weight
    features = {"masked_lm_ids": masked_lm_ids,
                "masked_lm_weights": masked_lm_weights,
                "next_sentence_labels": next_sentence_labels}
    if next_sentence_weights is not None:
      features["next_sentence_weights"] = next_sentence_weights
    return self.objective.loss(y_pred, features)

  def check_targets(self, x, y, where):
    """(masked_lm_ids [examples, predictions] of vocabulary ids,
    next_sentence_labels [examples] of 0 IsNext or 1 NotNext), for ids."""
    expected = "(masked_lm_ids, next_sentence_labels)"
    if isinstance(y, dict) and getattr(self, "loss", None) is None:
      raise ValueError(f"{where} is a dict; run_pretraining's loss (no loss "
                       f"given to compile()) takes {expected}")
    if not targets.given(y, x, where, expected):
      return
    if not isinstance(y, (tuple, list)) or len(y) != 2:
      raise ValueError(f"{where} is not a pair; expected {expected}")
    positions = targets.input_shape(x, "masked_lm_positions")
    predictions = positions[-1] if positions else None
    targets.check_class_ids(
        y[0], x, f"{where}[0]", self.config.vocab_size,
        f"vocabulary ids (vocab_size={self.config.vocab_size})",
        [(None, predictions)], "masked_lm_ids [examples, predictions]")
    targets.check_class_ids(
        y[1], x, f"{where}[1]", 2, "next-sentence labels (0 IsNext, 1 "
        "NotNext)", [(None,), (None, 1)], "next_sentence_labels [examples]")

  def fit(self, x=None, y=None, batch_size=None, epochs=1, **kwargs):
    texts = self._texts(x, "fit")
    if texts is None:
      return super().fit(x, y, batch_size, epochs, **kwargs)
    if y is not None or "validation_split" in kwargs:
      raise ValueError(f"{type(self).__name__}.fit on text takes no y (the "
                       "targets are the masked tokens) nor validation_split "
                       "(pass validation_data)")
    batch_size = self._batch_size(batch_size, "fit")
    validation_texts = self._texts(kwargs.get("validation_data"), "fit",
                                   "validation_data")
    if validation_texts is not None:
      kwargs["validation_data"] = self._fixed_masks(validation_texts,
                                                    batch_size)
    batches = self._new_masks(texts, batch_size,
                              shuffle=kwargs.pop("shuffle", True))
    return super().fit(batches, epochs=epochs, shuffle=False, **kwargs)

  def evaluate(self, x=None, y=None, batch_size=None, **kwargs):
    texts = self._texts(x, "evaluate")
    if texts is None:
      return super().evaluate(x, y, batch_size, **kwargs)
    if y is not None:
      raise ValueError(f"{type(self).__name__}.evaluate on text takes no y "
                       "(the targets are the masked tokens)")
    return super().evaluate(self._fixed_masks(
        texts, self._batch_size(batch_size, "evaluate")), **kwargs)

  def predict(self, x, *args, **kwargs):
    if self._texts(x, "predict") is not None:
      raise ValueError(f"{type(self).__name__}.predict takes ids with "
                       "masked_lm_positions; bert_tf.fill_mask(model, text) "
                       "fills a text's [MASK]s")
    return super().predict(x, *args, **kwargs)

  def _texts(self, x, method, name="x"):
    """x (the argument `name`) as a string tensor where it is text that the
    masking preprocessor takes, else None. One bare string is refused (see
    TextModel), and so is a tuple: single texts are masked, and pairs come
    as ids, with their next-sentence labels, from
    create_pretraining_data."""
    if self.preprocessor is None or x is None:
      return None
    if isinstance(x, tuple):
      raise ValueError(
          f"{type(self).__name__}.{method}: {name} is a tuple; the masked "
          f"LM takes single texts, in a list: {name}=[text, ...] (pairs "
          "come as ids, with next-sentence labels, from "
          "create_pretraining_data)")
    self._check_not_bare_text(x, method)
    texts = as_keras_texts(x)
    if isinstance(texts, tf.Tensor) and texts.dtype == tf.string:
      return texts
    return None

  def _batch_size(self, batch_size, method):
    """batch_size, Keras' default where None, checked."""
    if batch_size is None:
      return fit_plan.KERAS_BATCH_SIZE
    check_positive_int(batch_size, "batch_size",
                       f"{type(self).__name__}.{method}")
    return batch_size

  def _new_masks(self, texts, batch_size, shuffle):
    """A dataset of masked batches of texts (a string tensor), masks drawn
    anew each epoch."""
    texts = tf.data.Dataset.from_tensor_slices(texts)
    if shuffle:
      texts = texts.shuffle(int(texts.cardinality()),
                            reshuffle_each_iteration=True)
    seeds = tf.data.Dataset.random(rerandomize_each_iteration=True).batch(2)
    return tf.data.Dataset.zip(texts.batch(batch_size), seeds).map(
        self.preprocessor.masked)

  def _fixed_masks(self, texts, batch_size):
    """A dataset of masked batches of texts (a string tensor), each text
    masked by a seed of its position: the same masks on every pass and
    call, whatever the batch size."""
    count = int(texts.shape[0])
    seeds = tf.data.Dataset.range(count).map(
        lambda index: tf.stack([_FIXED_MASKS_SEED, index]))
    one_by_one = tf.data.Dataset.zip(
        tf.data.Dataset.from_tensor_slices(texts).batch(1), seeds).map(
            self.preprocessor.masked, num_parallel_calls=tf.data.AUTOTUNE,
            deterministic=True)
    return one_by_one.unbatch().batch(batch_size).apply(
        tf.data.experimental.assert_cardinality(math.ceil(count / batch_size)))

  def target_output(self, outputs):
    """(masked_lm_log_probs, next_sentence_log_probs), for targets
    (masked_lm_ids, next_sentence_labels) and the losses given to
    compile(); log-probabilities are their own logits, so from_logits=True
    losses apply."""
    return (outputs["masked_lm_log_probs"],
            outputs["next_sentence_log_probs"])
