"""sentence-transformers' losses of sparse (SPLADE) embeddings: SpladeLoss,
a ranking loss plus the FLOPS regulariser of the query and document
embeddings, which keeps them sparse."""

import math
import numbers

import keras
from keras import ops

from bert_tf.objectives.embedding import (MultipleNegativesRankingLoss,
                                          check_loss)


@keras.saving.register_keras_serializable(package="bert_tf")
class SparseMultipleNegativesRankingLoss(MultipleNegativesRankingLoss):
  """MultipleNegativesRankingLoss with sentence-transformers'
  SparseMultipleNegativesRankingLoss defaults: dot similarity, scale 1.
  The loss SpladeLoss ranks with (see MultipleNegativesRankingLoss)."""

  def __init__(self, scale=1.0, similarity="dot",
               name="sparse_multiple_negatives_ranking_loss", **kwargs):
    super().__init__(scale=scale, similarity=similarity, name=name,
                     **kwargs)


@keras.saving.register_keras_serializable(package="bert_tf")
class FlopsLoss(keras.losses.Loss):
  """The FLOPS regulariser, as sentence-transformers' FlopsLoss: the sum
  over dims of the squared mean of the embeddings, a smooth count of the
  multiplications a sparse dot product costs.

  Args:
    threshold: None, or a number: the rows with at most this many non-zero
      dims count as zeros (FLOPS with L0 masking), so that sparse enough
      embeddings are not pushed further.

  y_pred: [..., dim] embeddings; every row counts once. Gives a scalar.
  """

  def __init__(self, threshold=None, name="flops_loss", **kwargs):
    _check_optional_number(threshold, "threshold", type(self).__name__)
    super().__init__(name=name, **kwargs)
    self.threshold = _optional_float(threshold)

  def call(self, y_true, y_pred):
    del y_true  # A regulariser of the embeddings alone.
    rows = ops.cast(y_pred, "float32")
    rows = ops.reshape(rows, (-1, ops.shape(rows)[-1]))
    if self.threshold is not None:
      active = ops.sum(ops.cast(ops.not_equal(rows, 0), "float32"), axis=1)
      rows *= ops.cast(active > self.threshold, "float32")[:, None]
    return ops.sum(ops.square(ops.mean(rows, axis=0)))

  def get_config(self):
    return {**super().get_config(), "threshold": self.threshold}


@keras.saving.register_keras_serializable(package="bert_tf")
class SpladeLoss(keras.losses.Loss):
  """A ranking loss plus FLOPS regularisers, as sentence-transformers'
  SpladeLoss: loss(y_pred) + document_regularizer_weight * the document
  regulariser of the columns after the first (positives and negatives) +
  query_regularizer_weight * the query regulariser of the first column
  (the queries). The regularisers are one number of the batch each,
  added to every example's loss: Keras' mean over the batch keeps them
  whole (fit's sample weights scale them by the weights' mean).

      sparse_encoder.compile(optimizer, loss=SpladeLoss(
          SparseMultipleNegativesRankingLoss(),
          document_regularizer_weight=3e-5, query_regularizer_weight=5e-5))

  sentence-transformers' trainer also raises both weights from 0 over the
  first third of training (its SpladeRegularizerWeightSchedulerCallback);
  this loss applies them as given. Under a tf.distribute strategy each
  replica regularises its own rows, as sentence-transformers each device.

  Args:
    loss: the ranking loss, a keras Loss of y_pred [batch, k, dim]
      (SparseMultipleNegativesRankingLoss).
    document_regularizer_weight: the documents' regulariser's weight, >= 0.
    query_regularizer_weight: the queries' regulariser's weight, >= 0;
      None: the queries are not regularised (inference-free models, whose
      queries take no encoder).
    document_regularizer, query_regularizer: a keras Loss of [rows, dim]
      embeddings giving a scalar, for the documents or the queries; None:
      FlopsLoss with the threshold below.
    document_regularizer_threshold, query_regularizer_threshold: the
      default FlopsLoss's threshold, or None.
    use_document_regularizer_only: every column (queries too) is
      regularised as documents; then no query_* argument may be set.

  y_pred: [batch, k >= 2, dim]: queries, positives, then any negatives.
  """

  def __init__(self, loss, document_regularizer_weight,
               query_regularizer_weight=None, document_regularizer=None,
               query_regularizer=None, document_regularizer_threshold=None,
               query_regularizer_threshold=None,
               use_document_regularizer_only=False, name="splade_loss",
               **kwargs):
    name_of = type(self).__name__
    check_loss(loss, "loss", name_of)
    _check_weight(document_regularizer_weight, "document_regularizer_weight",
                  name_of)
    if query_regularizer_weight is not None:
      _check_weight(query_regularizer_weight, "query_regularizer_weight",
                    name_of)
    _check_optional_number(document_regularizer_threshold,
                           "document_regularizer_threshold", name_of)
    _check_optional_number(query_regularizer_threshold,
                           "query_regularizer_threshold", name_of)
    use_document_regularizer_only = bool(use_document_regularizer_only)
    if use_document_regularizer_only:
      _check_no_query_arguments(
          name_of, query_regularizer_weight=query_regularizer_weight,
          query_regularizer=query_regularizer,
          query_regularizer_threshold=query_regularizer_threshold)
    super().__init__(name=name, **kwargs)
    self.loss = loss
    self.document_regularizer_weight = float(document_regularizer_weight)
    self.query_regularizer_weight = _optional_float(query_regularizer_weight)
    self.document_regularizer_threshold = _optional_float(
        document_regularizer_threshold)
    self.query_regularizer_threshold = _optional_float(
        query_regularizer_threshold)
    self.document_regularizer = _regularizer(
        document_regularizer, self.document_regularizer_threshold,
        "document", name_of)
    self.query_regularizer = None if use_document_regularizer_only else \
        _regularizer(query_regularizer, self.query_regularizer_threshold,
                     "query", name_of)
    self.use_document_regularizer_only = use_document_regularizer_only
    self._given_regularizers = (document_regularizer, query_regularizer)

  def call(self, y_true, y_pred):
    embeddings = ops.cast(y_pred, "float32")
    losses = self.loss.call(y_true, embeddings)
    first = 0 if self.use_document_regularizer_only else 1
    # [(k - first) * batch, dim]: each column's rows in turn, as
    # sentence-transformers concatenates the columns.
    documents = ops.reshape(ops.transpose(embeddings[:, first:], (1, 0, 2)),
                            (-1, ops.shape(embeddings)[-1]))
    regularizers = self.document_regularizer_weight * _regularized(
        self.document_regularizer, documents)
    if self.query_regularizer_weight is not None:
      regularizers += self.query_regularizer_weight * _regularized(
          self.query_regularizer, embeddings[:, 0])
    return losses + regularizers

  def get_config(self):
    document_regularizer, query_regularizer = self._given_regularizers
    return {
        **super().get_config(),
        "loss": keras.saving.serialize_keras_object(self.loss),
        "document_regularizer_weight": self.document_regularizer_weight,
        "query_regularizer_weight": self.query_regularizer_weight,
        "document_regularizer": keras.saving.serialize_keras_object(
            document_regularizer),
        "query_regularizer": keras.saving.serialize_keras_object(
            query_regularizer),
        "document_regularizer_threshold":
            self.document_regularizer_threshold,
        "query_regularizer_threshold": self.query_regularizer_threshold,
        "use_document_regularizer_only": self.use_document_regularizer_only}

  @classmethod
  def from_config(cls, config):
    losses = {key: keras.saving.deserialize_keras_object(config[key])
              for key in ("loss", "document_regularizer",
                          "query_regularizer")}
    return cls(**{**config, **losses})


def _regularized(regularizer, rows):
  """The regulariser's scalar of [rows, dim] embeddings."""
  return regularizer(ops.zeros(ops.shape(rows)[:1]), rows)


def _regularizer(given, threshold, kind, name_of):
  """The regulariser of the queries or documents: the one given, else
  FlopsLoss(threshold)."""
  if given is None:
    return FlopsLoss(threshold, name=f"{kind}_regularizer")
  check_loss(given, f"{kind}_regularizer", name_of)
  if threshold is not None:
    raise ValueError(f"{name_of}: {kind}_regularizer_threshold applies to "
                     f"the default FlopsLoss, not to the {kind}_regularizer "
                     f"given; give it FlopsLoss(threshold=...) instead")
  return given


def _optional_float(value):
  """value as a float (a JSON config's), None as None."""
  return None if value is None else float(value)


def _check_weight(weight, argument, name_of):
  if isinstance(weight, bool) or not isinstance(weight, numbers.Real) or \
      not math.isfinite(weight) or weight < 0:
    raise ValueError(f"{name_of}: {argument}={weight!r}; expected a number "
                     ">= 0")


def _check_optional_number(value, argument, name_of):
  if value is not None and (isinstance(value, bool) or not isinstance(
      value, numbers.Real) or not math.isfinite(value) or value < 0):
    raise ValueError(f"{name_of}: {argument}={value!r}; expected None or a "
                     "number >= 0")


def _check_no_query_arguments(name_of, **arguments):
  """Raises ValueError naming the first query argument set, which
  use_document_regularizer_only would ignore."""
  for argument, value in arguments.items():
    if value is not None:
      raise ValueError(f"{name_of}: {argument}={value!r} with "
                       "use_document_regularizer_only=True; expected None "
                       "(every column is regularised as documents)")
