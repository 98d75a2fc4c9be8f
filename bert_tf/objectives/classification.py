"""run_classifier's losses and metrics: softmax cross-entropy and accuracy
for classes, squared error for a regressor, and the sigmoid cross-entropy
of each label for a multi-label classifier or a one-label cross-encoder
(sentence-transformers' BCEWithLogitsLoss); each the mean over the real
examples."""

from bert_tf.objectives import cross_entropy
from bert_tf.objectives.objective import Objective, Term

_LOSS = "classification_loss"


def _term(name, function):
  """name's Term of function on the label ids and logits of the real
  examples."""
  return Term(name, function, targets="label_ids", scores="logits",
              weights="is_real_example")


class ClassificationObjective(Objective):
  """Softmax cross-entropy of the logits against each example's class id,
  and accuracy."""

  terms = (_term(_LOSS, cross_entropy.class_cross_entropy),)
  metrics = {"accuracy": _term("accuracy", cross_entropy.class_correct)}
  keras_metric = ("sparse_categorical_accuracy", cross_entropy.class_correct)


class RegressionObjective(Objective):
  """Squared error of the one logit against each example's number."""

  terms = (_term(_LOSS, cross_entropy.squared_error),)
  keras_metric = ("mean_squared_error", cross_entropy.squared_error)


class MultiLabelObjective(Objective):
  """Sigmoid cross-entropy of each label's logit against its target from 0
  to 1, and the share of labels on the right side of 0.5."""

  terms = (_term(_LOSS, cross_entropy.binary_cross_entropy),)
  metrics = {"accuracy": _term("accuracy", cross_entropy.binary_correct)}
  keras_metric = ("binary_accuracy", cross_entropy.binary_correct)
