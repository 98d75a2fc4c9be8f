"""What a runner optimises and reports, as sums over examples.

A loss such as the original's masked-LM loss is a ratio: a sum over
predictions divided by their weight. Split over replicas or micro-batches,
the mean of per-part ratios is not the whole batch's ratio. An objective
therefore gives the trainer each loss term as a numerator (from the model's
outputs) and a denominator (from the features alone, so it can be summed
over the global batch before any forward pass). The trainer divides every
part's numerator by the global denominator, so the summed gradient is the
gradient of exactly the loss one device would compute on the whole batch.

Metrics are (sum, count) pairs, accumulated over steps as the original's
tf.metrics were; every loss term is also reported as a metric.
"""

import tensorflow as tf
from keras import ops

from bert_tf.training import losses


class PretrainingObjective:
  """The original run_pretraining's loss and evaluation metrics."""

  # Added to each term's global denominator, as the original adds it.
  denominator_epsilons = {"masked_lm_loss": losses.MASKED_LM_EPSILON,
                          "next_sentence_loss": 0.0}

  def loss_denominators(self, features):
    """{term: float32 scalar}, from the features only."""
    return {
        "masked_lm_loss": ops.sum(
            ops.cast(features["masked_lm_weights"], "float32")),
        "next_sentence_loss": ops.cast(
            ops.shape(features["next_sentence_labels"])[0], "float32"),
    }

  def loss_numerators(self, outputs, features):
    """{term: float32 scalar}: the summed per-example losses."""
    weights = ops.cast(features["masked_lm_weights"], "float32")
    masked_lm_losses = losses.masked_lm_example_losses(
        outputs["masked_lm_logits"], features["masked_lm_ids"])
    return {
        "masked_lm_loss": ops.sum(weights * masked_lm_losses),
        "next_sentence_loss": ops.sum(losses.next_sentence_example_losses(
            outputs["next_sentence_log_probs"],
            features["next_sentence_labels"])),
    }

  def metric_sums(self, outputs, features):
    """{name: (sum, count)} for the metrics beyond the loss terms."""
    return {
        "masked_lm_accuracy": accuracy_sums(
            outputs["masked_lm_logits"], features["masked_lm_ids"],
            features["masked_lm_weights"]),
        "next_sentence_accuracy": accuracy_sums(
            outputs["next_sentence_log_probs"],
            features["next_sentence_labels"]),
    }


class ClassificationObjective:
  """run_classifier's loss: mean cross-entropy over the real examples (mean
  squared error for a regressor), and accuracy."""

  denominator_epsilons = {"classification_loss": 0.0}

  def __init__(self, is_regression=False):
    self.is_regression = is_regression

  def loss_denominators(self, features):
    return {"classification_loss": ops.sum(
        ops.cast(features["is_real_example"], "float32"))}

  def loss_numerators(self, outputs, features):
    return {"classification_loss": ops.sum(
        ops.cast(features["is_real_example"], "float32")
        * example_losses(outputs, features["label_ids"],
                         self.is_regression))}

  def metric_sums(self, outputs, features):
    if self.is_regression:
      return {}
    return {"accuracy": accuracy_sums(outputs["logits"], features["label_ids"],
                                      features["is_real_example"])}


class SpanObjective:
  """run_squad's loss: the mean over real features of the start and end
  position cross-entropies, averaged, as the original's
  (start_loss + end_loss) / 2; and how often each position is right."""

  denominator_epsilons = {"span_loss": 0.0}

  def loss_denominators(self, features):
    return {"span_loss": ops.sum(
        ops.cast(features["is_real_example"], "float32"))}

  def loss_numerators(self, outputs, features):
    losses_of = {
        name: ops.sparse_categorical_crossentropy(
            ops.cast(features[f"{name}_positions"], "int32"),
            outputs[f"{name}_logits"], from_logits=True)
        for name in ("start", "end")}
    return {"span_loss": ops.sum(
        ops.cast(features["is_real_example"], "float32")
        * (losses_of["start"] + losses_of["end"]) / 2.0)}

  def metric_sums(self, outputs, features):
    return {f"{name}_accuracy": accuracy_sums(
        outputs[f"{name}_logits"], features[f"{name}_positions"],
        features["is_real_example"]) for name in ("start", "end")}


class TaggingObjective:
  """run_ner's loss: the mean cross-entropy over the predicted positions
  (each word's first piece) of the global batch, and their accuracy."""

  denominator_epsilons = {"tagging_loss": 0.0}

  def loss_denominators(self, features):
    return {"tagging_loss": ops.sum(
        ops.cast(features["label_mask"], "float32"))}

  def loss_numerators(self, outputs, features):
    return {"tagging_loss": ops.sum(
        ops.cast(features["label_mask"], "float32")
        * ops.sparse_categorical_crossentropy(
            ops.cast(features["label_ids"], "int32"), outputs["logits"],
            from_logits=True))}

  def metric_sums(self, outputs, features):
    return {"tagging_accuracy": accuracy_sums(
        outputs["logits"], features["label_ids"], features["label_mask"])}


def accuracy_sums(scores, labels, weights=None):
  """(weighted number right, sum of weights): the arg-max of scores against
  labels, as the original's tf.metrics.accuracy accumulates it.

  Args:
    scores: [..., classes] logits or log-probabilities.
    labels: the label ids, of scores' leading shape (or with a trailing 1).
    weights: per-label weights (default 1).
  """
  # tf.argmax, the original's: keras.ops.argmax first rewrites -0.0 in four
  # more passes over the scores, which for the masked-LM logits cost 5% of
  # a pretraining step on CPU.
  predicted = tf.argmax(scores, axis=-1)
  labels = ops.reshape(ops.cast(labels, "int64"), ops.shape(predicted))
  correct = ops.cast(ops.equal(predicted, labels), "float32")
  weights = ops.ones_like(correct) if weights is None else ops.cast(
      weights, "float32")
  return ops.sum(weights * correct), ops.sum(weights)


def example_losses(outputs, label_ids, is_regression):
  """Per-example loss of a BertClassifier's outputs: [batch]."""
  if is_regression:
    return ops.square(outputs["predictions"]
                      - ops.cast(label_ids, "float32"))
  return ops.sparse_categorical_crossentropy(
      ops.reshape(ops.cast(label_ids, "int32"), (-1,)), outputs["logits"],
      from_logits=True)
