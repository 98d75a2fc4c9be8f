"""The pretraining losses exactly as the original run_pretraining.py, and
sentence-transformers' MultipleNegativesRankingLoss to train an embedder."""

import keras
import tensorflow as tf
from keras import ops

from bert_tf.layers.pooling import l2_normalize

# The original adds this to the masked-LM weight sum, so that a batch
# without predictions gives a loss of 0 rather than 0 / 0.
MASKED_LM_EPSILON = 1e-5


def masked_lm_example_losses(masked_lm_scores, masked_lm_ids):
  """Negative log-likelihood of each masked token: [batch, num_predictions].

  masked_lm_scores: [batch, num_predictions, vocab_size] logits or
  log-probabilities, which give the same number (log_softmax leaves
  log-probabilities as they are).
  """
  scores = ops.cast(masked_lm_scores, "float32")
  vocab_size = ops.shape(scores)[-1]
  losses = sparse_cross_entropy_with_logits(
      ops.reshape(ops.cast(masked_lm_ids, "int32"), (-1,)),
      ops.reshape(scores, (-1, vocab_size)))
  return ops.reshape(losses, ops.shape(masked_lm_ids))


@tf.custom_gradient
def sparse_cross_entropy_with_logits(labels, logits):
  """-log_softmax(logits)[label] of each row, as the original computes it
  (log_softmax, then the label's entry), with the gradient
  (softmax - one_hot(label)) * upstream.

  The same numbers as tf.nn.sparse_softmax_cross_entropy_with_logits
  (within float32 rounding; tested), whose CPU kernel takes about twice as
  long over a vocabulary (docs/performance.md).

  Args:
    labels: [rows] int32 ids in [0, classes).
    logits: [rows, classes] float32.
  """
  largest = tf.reduce_max(logits, axis=-1, keepdims=True)
  exponentials = tf.exp(logits - largest)
  total = tf.reduce_sum(exponentials, axis=-1)
  picked = tf.gather(logits, labels[:, None], batch_dims=1)[:, 0]
  losses = -((picked - largest[:, 0]) - tf.math.log(total))

  def gradient(upstream):
    probabilities = exponentials * (upstream / total)[:, None]
    label_entries = tf.stack([tf.range(tf.shape(labels)[0]), labels], axis=1)
    return None, tf.tensor_scatter_nd_sub(probabilities, label_entries,
                                          upstream)

  return losses, gradient


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


@keras.saving.register_keras_serializable(package="bert_tf")
class MultipleNegativesRankingLoss(keras.losses.Loss):
  """Contrastive loss with in-batch negatives, as sentence-transformers'
  MultipleNegativesRankingLoss by default (InfoNCE: query_to_doc, one
  joint softmax, no hardness weighting).

  Each anchor's candidates are the positives of the whole batch, then each
  further column (hard negatives) of the whole batch; its loss is the
  cross-entropy of scale * similarity against its own positive. The batch
  loss is their mean. y_true is ignored (BertEmbedder.compute_loss gives
  zeros when fit has no y), so

      embedder.compile(optimizer, loss=MultipleNegativesRankingLoss())
      embedder.fit((anchors, positives), batch_size=32)

  fine-tunes on raw text: lists of Python strings, string arrays, or a
  tf.data.Dataset of batched elements ((anchor, positive),) (a 1-tuple,
  since Keras reads a 2-tuple element as (x, y)); three or more columns
  add hard negatives.

  Under a tf.distribute strategy Keras computes the loss per replica, so a
  row's in-batch negatives are its replica's rows only (as
  sentence-transformers with gather_across_devices=False).

  Args:
    scale: the similarities' multiplier (1 / temperature), > 0.
    similarity: "cosine" (cos_sim: the embeddings are L2-normalised here,
      whether or not the model normalises) or "dot" (dot_score).

  y_pred: BertEmbedder's "embedding" for a tuple of k >= 2 text columns,
    [batch, k, dim]: anchor, positive, then any negatives.
  """

  def __init__(self, scale=20.0, similarity="cosine",
               name="multiple_negatives_ranking_loss", **kwargs):
    name_of = type(self).__name__
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or \
        not scale > 0:
      raise ValueError(f"{name_of}: scale={scale!r}; expected a number > 0")
    if similarity not in ("cosine", "dot"):
      raise ValueError(f"{name_of}: similarity={similarity!r}; expected "
                       "cosine or dot")
    super().__init__(name=name, **kwargs)
    self.scale = float(scale)
    self.similarity = similarity

  def call(self, y_true, y_pred):
    del y_true  # The positives are y_pred's second column.
    embeddings = ops.cast(y_pred, "float32")
    shape = embeddings.shape
    if len(shape) != 3 or (shape[1] is not None and shape[1] < 2):
      raise ValueError(
          f"{type(self).__name__}: y_pred has shape {tuple(shape)}; "
          "expected [batch, k >= 2, dim], the embeddings of a tuple of k "
          "text columns (anchor, positive, negatives...): fit((anchors, "
          "positives)) or a dataset of ((anchor, positive),)")
    if self.similarity == "cosine":
      embeddings = l2_normalize(embeddings)
    # [(k - 1) * batch, dim]: every positive, then every first negative...
    candidates = ops.reshape(ops.transpose(embeddings[:, 1:], (1, 0, 2)),
                             (-1, ops.shape(embeddings)[-1]))
    scores = self.scale * ops.matmul(embeddings[:, 0],
                                     ops.transpose(candidates))
    labels = ops.arange(ops.shape(embeddings)[0], dtype="int32")
    return sparse_cross_entropy_with_logits(labels, scores)

  def get_config(self):
    return {**super().get_config(), "scale": self.scale,
            "similarity": self.similarity}
