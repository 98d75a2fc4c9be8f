"""run_ner's loss: the mean cross-entropy over the predicted positions
(each word's first piece) of the global batch, and their accuracy."""

from bert_tf.objectives import cross_entropy
from bert_tf.objectives.objective import Objective, Term


def _term(name, function):
  return Term(name, function, targets="label_ids", scores="logits",
              weights="label_mask")


class TaggingObjective(Objective):
  """Softmax cross-entropy of each labelled position's tag."""

  terms = (_term("tagging_loss", cross_entropy.class_cross_entropy),)
  metrics = {"tagging_accuracy": _term("tagging_accuracy",
                                       cross_entropy.class_correct)}
  keras_metric = ("sparse_categorical_accuracy", cross_entropy.class_correct)
  # fit's sample_weight is label_mask: the loss is the mean over the words'
  # first pieces, as the Trainer divides by label_mask's sum.
  keras_reduction = "mean_with_sample_weight"
