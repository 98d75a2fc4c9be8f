"""sentence-transformers' MultipleNegativesRankingLoss, to train an
embedder (BertEmbedder's compile() default), and MatryoshkaLoss, which
trains it at several truncated dimensions at once."""

import math
import numbers

import keras
from keras import ops

from bert_tf.layers.pooling import l2_normalize
from bert_tf.objectives.cross_entropy import sparse_cross_entropy_with_logits


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


@keras.saving.register_keras_serializable(package="bert_tf")
class MatryoshkaLoss(keras.losses.Loss):
  """A loss of embeddings taken at several leading dimensions, as
  sentence-transformers' MatryoshkaLoss: the weighted sum, over
  matryoshka_dims, of `loss` on the embeddings truncated to the dim and
  L2-normalised again. An embedder trained so keeps its quality at
  encode(texts, truncate_dim=dim).

      embedder.compile(optimizer, loss=MatryoshkaLoss(
          MultipleNegativesRankingLoss(), [768, 512, 256, 128, 64]))

  Args:
    loss: the keras Loss at each dim, of y_pred [batch, k, dim]
      (MultipleNegativesRankingLoss). Where y_true has the embeddings'
      width (a distillation target), it is truncated with them.
    matryoshka_dims: the dims, each an integer from 1 to the embeddings'
      width; taken largest first, as sentence-transformers sorts them.
    matryoshka_weights: each dim's weight (1 for every dim by default).
    n_dims_per_step: -1: every dim at each step; n >= 1: n of the dims at
      each step, drawn at random without replacement (every dim where n
      covers them). The draw is Keras' (keras.random with `seed`), not
      Python's random as in sentence-transformers: the same distribution,
      not the same draws.
    seed: the draws' seed (an int), or None.

  y_pred: [batch, ..., width] float embeddings, as `loss` takes them.
  """

  def __init__(self, loss, matryoshka_dims, matryoshka_weights=None,
               n_dims_per_step=-1, seed=None, name="matryoshka_loss",
               **kwargs):
    name_of = type(self).__name__
    check_loss(loss, "loss", name_of)
    dims, weights = _checked_dims_and_weights(
        matryoshka_dims, matryoshka_weights, name_of)
    if isinstance(n_dims_per_step, bool) or not isinstance(
        n_dims_per_step, numbers.Integral) or not (
            n_dims_per_step == -1 or n_dims_per_step >= 1):
      raise ValueError(f"{name_of}: n_dims_per_step={n_dims_per_step!r}; "
                       "expected -1 (every dim) or an integer >= 1")
    if seed is not None and (isinstance(seed, bool) or
                             not isinstance(seed, numbers.Integral)):
      raise ValueError(f"{name_of}: seed={seed!r}; expected an int or None")
    super().__init__(name=name, **kwargs)
    self.loss = loss
    self.matryoshka_dims = dims
    self.matryoshka_weights = weights
    self.n_dims_per_step = int(n_dims_per_step)
    self.seed = None if seed is None else int(seed)
    self._seed_generator = None
    if 1 <= self.n_dims_per_step < len(dims):
      self._seed_generator = keras.random.SeedGenerator(seed)

  def call(self, y_true, y_pred):
    width = y_pred.shape[-1]
    if width is not None and self.matryoshka_dims[0] > width:
      raise ValueError(
          f"{type(self).__name__}: matryoshka_dims has "
          f"{self.matryoshka_dims[0]}, more than the embeddings' {width} "
          "dimensions")
    weights = self._step_weights()
    total = 0.0
    for index, dim in enumerate(self.matryoshka_dims):
      total += weights[index] * self.loss.call(
          _truncated_target(y_true, width, dim),
          l2_normalize(ops.cast(y_pred[..., :dim], "float32")))
    return total

  def _step_weights(self):
    """Each dim's weight at this step: matryoshka_weights, or, when
    n_dims_per_step picks some, those weights at n dims drawn at random
    and 0 at the others."""
    weights = ops.convert_to_tensor(self.matryoshka_weights, "float32")
    if self._seed_generator is None:
      return weights
    order = keras.random.shuffle(ops.arange(len(self.matryoshka_dims)),
                                 seed=self._seed_generator)
    picked = ops.scatter(order[:self.n_dims_per_step, None],
                         ops.ones((self.n_dims_per_step,), "float32"),
                         (len(self.matryoshka_dims),))
    return weights * picked

  def get_config(self):
    return {**super().get_config(),
            "loss": keras.saving.serialize_keras_object(self.loss),
            "matryoshka_dims": list(self.matryoshka_dims),
            "matryoshka_weights": list(self.matryoshka_weights),
            "n_dims_per_step": self.n_dims_per_step, "seed": self.seed}

  @classmethod
  def from_config(cls, config):
    return cls(**{**config, "loss": keras.saving.deserialize_keras_object(
        config["loss"])})


def check_loss(loss, argument, name_of):
  """Raises TypeError, naming the argument, unless loss is a keras Loss:
  the loss a loss of embeddings wraps."""
  if not isinstance(loss, keras.losses.Loss):
    raise TypeError(f"{name_of}: {argument} is {type(loss).__name__}; "
                    "expected a keras Loss")


def _checked_dims_and_weights(dims, weights, name_of):
  """(dims, weights) as tuples sorted by dim, largest first, as
  sentence-transformers orders them; or a ValueError naming the
  argument."""
  if isinstance(dims, (str, bytes)) or not hasattr(dims, "__len__") or \
      len(dims) == 0:
    raise ValueError(f"{name_of}: matryoshka_dims={dims!r}; expected a "
                     "non-empty list of integers >= 1")
  for dim in dims:
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or \
        dim < 1:
      raise ValueError(f"{name_of}: matryoshka_dims has {dim!r}; expected "
                       "integers >= 1")
  if weights is None:
    weights = [1.0] * len(dims)
  if isinstance(weights, (str, bytes)) or not hasattr(weights, "__len__") \
      or len(weights) != len(dims):
    raise ValueError(f"{name_of}: matryoshka_weights={weights!r}; expected "
                     f"{len(dims)} numbers, one per dim of matryoshka_dims")
  for weight in weights:
    if isinstance(weight, bool) or not isinstance(weight, numbers.Real) \
        or not math.isfinite(weight):
      raise ValueError(f"{name_of}: matryoshka_weights has {weight!r}; "
                       "expected finite numbers")
  pairs = sorted(zip(dims, weights), key=lambda pair: pair[0], reverse=True)
  return (tuple(int(dim) for dim, _ in pairs),
          tuple(float(weight) for _, weight in pairs))


def _truncated_target(y_true, width, dim):
  """y_true cut to dim where it holds embeddings (a rank-2 or 3 tensor of
  the embeddings' width), as sentence-transformers cuts its labels."""
  shape = getattr(y_true, "shape", ())
  if len(shape) in (2, 3) and width is not None and shape[-1] == width:
    return y_true[..., :dim]
  return y_true
