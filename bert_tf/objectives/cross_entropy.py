"""The functions of targets and scores that the tasks' losses and
metrics are made of."""

import keras
import tensorflow as tf
from keras import ops


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


def _labels_of(labels, scores):
  """Class ids of scores' leading shape (labels may have a trailing 1)."""
  return ops.reshape(labels, ops.shape(scores)[:-1])


@keras.saving.register_keras_serializable(package="bert_tf")
def class_cross_entropy(labels, logits):
  """Softmax cross-entropy of each row of logits [..., classes] against
  its class id: [...]."""
  return ops.sparse_categorical_crossentropy(
      _labels_of(ops.cast(labels, "int32"), logits), logits, from_logits=True)


@keras.saving.register_keras_serializable(package="bert_tf")
def class_correct(labels, scores):
  """1.0 where a row's arg-max of scores [..., classes] is its class id,
  else 0.0: [...]."""
  # tf.argmax, the original's: keras.ops.argmax first rewrites -0.0 in four
  # more passes over the scores, which for the masked-LM logits cost 5% of
  # a pretraining step on CPU.
  predicted = tf.argmax(scores, axis=-1)
  labels = ops.reshape(ops.cast(labels, "int64"), ops.shape(predicted))
  return ops.cast(ops.equal(predicted, labels), "float32")


@keras.saving.register_keras_serializable(package="bert_tf")
def binary_cross_entropy(targets, logits):
  """Sigmoid cross-entropy of each logit [..., labels] against its target
  from 0 to 1, averaged over the labels: [...]."""
  targets = ops.reshape(ops.cast(targets, "float32"), ops.shape(logits))
  return ops.mean(ops.binary_crossentropy(targets, logits, from_logits=True),
                  axis=-1)


@keras.saving.register_keras_serializable(package="bert_tf")
def binary_correct(targets, logits):
  """The share of labels [..., labels] whose logit is on its target's
  side of 0 (probability 0.5): [...]."""
  targets = ops.reshape(ops.cast(targets, "float32"), ops.shape(logits))
  return ops.mean(ops.cast(ops.equal(targets, ops.cast(logits > 0.0,
                                                       "float32")),
                           "float32"), axis=-1)


@keras.saving.register_keras_serializable(package="bert_tf")
def squared_error(targets, predictions):
  """(prediction - target)^2, averaged over the last axis: [...]."""
  targets = ops.reshape(ops.cast(targets, "float32"), ops.shape(predictions))
  return ops.mean(ops.square(predictions - targets), axis=-1)


def accuracy_sums(scores, labels, weights=None):
  """(weighted number right, sum of weights): the arg-max of scores against
  labels, as the original's tf.metrics.accuracy accumulates it.

  Args:
    scores: [..., classes] logits or log-probabilities.
    labels: the label ids, of scores' leading shape (or with a trailing 1).
    weights: per-label weights (default 1).
  """
  correct = class_correct(labels, scores)
  weights = ops.ones_like(correct) if weights is None else ops.cast(
      weights, "float32")
  return ops.sum(weights * correct), ops.sum(weights)
