"""The pretraining losses exactly as the original run_pretraining.py."""

from keras import ops

# The original adds this to the masked-LM weight sum, so that a batch
# without predictions gives a loss of 0 rather than 0 / 0.
MASKED_LM_EPSILON = 1e-5


def masked_lm_example_losses(masked_lm_scores, masked_lm_ids):
  """Negative log-likelihood of each masked token: [batch, num_predictions].

  masked_lm_scores: [batch, num_predictions, vocab_size] logits or
  log-probabilities, which give the same number (log_softmax leaves
  log-probabilities as they are). From the logits, the fused cross-entropy
  is the original's -log_softmax[label] with a far cheaper gradient than
  picking the label's log-probability out of the vocabulary.
  """
  return ops.sparse_categorical_crossentropy(
      ops.cast(masked_lm_ids, "int32"),
      ops.cast(masked_lm_scores, "float32"), from_logits=True)


def next_sentence_example_losses(next_sentence_log_probs,
                                 next_sentence_labels):
  """Negative log-likelihood of each example's label: [batch]."""
  log_probs = ops.cast(next_sentence_log_probs, "float32")
  labels = ops.reshape(ops.cast(next_sentence_labels, "int32"), (-1, 1))
  return -ops.take_along_axis(log_probs, labels, axis=-1)[:, 0]


def masked_lm_loss(masked_lm_scores, masked_lm_ids, masked_lm_weights):
  """Weighted mean negative log-likelihood of the masked tokens.

  Padded prediction slots have weight 0. As in the original, the sum is
  divided by (sum of weights + 1e-5), so a batch without predictions gives 0.

  Args:
    masked_lm_scores: [batch_size, num_predictions, vocab_size] logits or
      log-probabilities (masked_lm_example_losses).
    masked_lm_ids: [batch_size, num_predictions] target ids.
    masked_lm_weights: [batch_size, num_predictions], 1.0 real, 0.0 padding.
  """
  weights = ops.cast(masked_lm_weights, "float32")
  numerator = ops.sum(
      weights * masked_lm_example_losses(masked_lm_scores, masked_lm_ids))
  return numerator / (ops.sum(weights) + MASKED_LM_EPSILON)


def next_sentence_loss(next_sentence_log_probs, next_sentence_labels):
  """Mean negative log-likelihood of the labels (0 = IsNext, 1 = random).

  Args:
    next_sentence_log_probs: [batch_size, 2].
    next_sentence_labels: [batch_size] or [batch_size, 1].
  """
  return ops.mean(next_sentence_example_losses(next_sentence_log_probs,
                                               next_sentence_labels))


def pretraining_loss(outputs, features):
  """The original run_pretraining's total loss: masked-LM + next-sentence.

  Args:
    outputs: BertPretrainer outputs (masked_lm_logits or masked_lm_log_probs,
      and next_sentence_log_probs).
    features: a dict with masked_lm_ids, masked_lm_weights and
      next_sentence_labels (as the pretraining TFRecords hold them).
  """
  # The logits where there are (a BertPretrainer's): the same loss, faster.
  scores = outputs.get("masked_lm_logits")
  if scores is None:
    scores = outputs["masked_lm_log_probs"]
  return (masked_lm_loss(scores,
                         features["masked_lm_ids"],
                         features["masked_lm_weights"])
          + next_sentence_loss(outputs["next_sentence_log_probs"],
                               features["next_sentence_labels"]))
