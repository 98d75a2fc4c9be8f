"""The pretraining losses exactly as the original run_pretraining.py: the
masked-LM and next-sentence cross-entropies, and their accuracies."""

import keras
from keras import ops

from bert_tf.objectives import cross_entropy
from bert_tf.objectives.objective import Objective, Term

# The original adds this to the masked-LM weight sum, so that a batch
# without predictions gives a loss of 0 rather than 0 / 0.
MASKED_LM_EPSILON = 1e-5


@keras.saving.register_keras_serializable(package="bert_tf")
def masked_lm_example_losses(masked_lm_ids, masked_lm_scores):
  """Negative log-likelihood of each masked token: [batch, num_predictions].

  masked_lm_scores: [batch, num_predictions, vocab_size] logits or
  log-probabilities, which give the same number (log_softmax leaves
  log-probabilities as they are).
  """
  scores = ops.cast(masked_lm_scores, "float32")
  vocab_size = ops.shape(scores)[-1]
  losses = cross_entropy.sparse_cross_entropy_with_logits(
      ops.reshape(ops.cast(masked_lm_ids, "int32"), (-1,)),
      ops.reshape(scores, (-1, vocab_size)))
  return ops.reshape(losses, ops.shape(masked_lm_ids))


@keras.saving.register_keras_serializable(package="bert_tf")
def next_sentence_example_losses(next_sentence_labels,
                                 next_sentence_log_probs):
  """Negative log-likelihood of each example's label: [batch]."""
  log_probs = ops.cast(next_sentence_log_probs, "float32")
  labels = ops.reshape(ops.cast(next_sentence_labels, "int32"), (-1, 1))
  return -ops.take_along_axis(log_probs, labels, axis=-1)[:, 0]


# The masked-LM loss: the weighted mean over the predictions, padded slots
# weighing 0, divided by (sum of weights + 1e-5) as the original.
MASKED_LM = Term("masked_lm_loss", masked_lm_example_losses,
                 targets="masked_lm_ids", scores="masked_lm_logits",
                 weights="masked_lm_weights", epsilon=MASKED_LM_EPSILON)
# The next-sentence loss: the mean over the examples (0 = IsNext, 1 =
# random), each scaled by next_sentence_weights where given (Keras' sample
# weights: 0 for a single text, which has no next sentence).
NEXT_SENTENCE = Term("next_sentence_loss", next_sentence_example_losses,
                     targets="next_sentence_labels",
                     scores="next_sentence_log_probs",
                     scale="next_sentence_weights")


class PretrainingObjective(Objective):
  """The original run_pretraining's loss and evaluation metrics."""

  terms = (MASKED_LM, NEXT_SENTENCE)
  metrics = {
      "masked_lm_accuracy": Term(
          "masked_lm_accuracy", cross_entropy.class_correct,
          targets="masked_lm_ids", scores="masked_lm_logits",
          weights="masked_lm_weights"),
      "next_sentence_accuracy": Term(
          "next_sentence_accuracy", cross_entropy.class_correct,
          targets="next_sentence_labels", scores="next_sentence_log_probs"),
  }


def masked_lm_loss(masked_lm_scores, masked_lm_ids, masked_lm_weights):
  """Weighted mean negative log-likelihood of the masked tokens (MASKED_LM).

  Args:
    masked_lm_scores: [batch_size, num_predictions, vocab_size] logits or
      log-probabilities (masked_lm_example_losses).
    masked_lm_ids: [batch_size, num_predictions] target ids.
    masked_lm_weights: [batch_size, num_predictions], 1.0 real, 0.0 padding.
  """
  return MASKED_LM.loss({"masked_lm_logits": masked_lm_scores},
                        {"masked_lm_ids": masked_lm_ids,
                         "masked_lm_weights": masked_lm_weights})


def next_sentence_loss(next_sentence_log_probs, next_sentence_labels):
  """Mean negative log-likelihood of the labels (NEXT_SENTENCE).

  Args:
    next_sentence_log_probs: [batch_size, 2].
    next_sentence_labels: [batch_size] or [batch_size, 1].
  """
  return NEXT_SENTENCE.loss(
      {"next_sentence_log_probs": next_sentence_log_probs},
      {"next_sentence_labels": next_sentence_labels})


def pretraining_loss(outputs, features):
  """The original run_pretraining's total loss: masked-LM + next-sentence.

  Args:
    outputs: BertPretrainer outputs (masked_lm_logits or masked_lm_log_probs,
      and next_sentence_log_probs).
    features: a dict with masked_lm_ids, masked_lm_weights and
      next_sentence_labels (as the pretraining TFRecords hold them).
  """
  # The logits where there are (a BertPretrainer's): the same loss, faster.
  if "masked_lm_logits" not in outputs:
    outputs = {**outputs, "masked_lm_logits": outputs["masked_lm_log_probs"]}
  return PretrainingObjective().loss(outputs, features)
