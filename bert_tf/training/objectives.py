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

from keras import ops

from bert_tf import losses


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
    # From the logits: the fused cross-entropy is the same number as the
    # original's -log_softmax[label], with a cheaper gradient.
    masked_lm_losses = ops.sparse_categorical_crossentropy(
        ops.cast(features["masked_lm_ids"], "int32"),
        outputs["masked_lm_logits"], from_logits=True)
    return {
        "masked_lm_loss": ops.sum(weights * masked_lm_losses),
        "next_sentence_loss": ops.sum(losses.next_sentence_example_losses(
            outputs["next_sentence_log_probs"],
            features["next_sentence_labels"])),
    }

  def metric_sums(self, outputs, features):
    """{name: (sum, count)} for the metrics beyond the loss terms."""
    weights = ops.cast(features["masked_lm_weights"], "float32")
    masked_lm_correct = ops.cast(ops.equal(
        ops.argmax(outputs["masked_lm_logits"], axis=-1),
        ops.cast(features["masked_lm_ids"], "int64")), "float32")
    labels = ops.reshape(features["next_sentence_labels"], (-1,))
    next_sentence_correct = ops.cast(ops.equal(
        ops.argmax(outputs["next_sentence_log_probs"], axis=-1),
        ops.cast(labels, "int64")), "float32")
    return {
        "masked_lm_accuracy": (ops.sum(weights * masked_lm_correct),
                               ops.sum(weights)),
        "next_sentence_accuracy": (
            ops.sum(next_sentence_correct),
            ops.cast(ops.shape(next_sentence_correct)[0], "float32")),
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
    real = ops.cast(features["is_real_example"], "float32")
    correct = ops.cast(ops.equal(
        ops.argmax(outputs["logits"], axis=-1),
        ops.cast(features["label_ids"], "int64")), "float32")
    return {"accuracy": (ops.sum(real * correct), ops.sum(real))}


def example_losses(outputs, label_ids, is_regression):
  """Per-example loss of a BertClassifier's outputs: [batch]."""
  if is_regression:
    return ops.square(outputs["predictions"]
                      - ops.cast(label_ids, "float32"))
  return ops.sparse_categorical_crossentropy(
      ops.reshape(ops.cast(label_ids, "int32"), (-1,)), outputs["logits"],
      from_logits=True)
