"""run_swag's loss: run_classifier's softmax cross-entropy and accuracy,
over each example's choices (BertMultipleChoice's logits [batch,
choices])."""

from bert_tf.objectives.classification import ClassificationObjective


class MultipleChoiceObjective(ClassificationObjective):
  """The right choice's cross-entropy, the mean over the real examples."""
