"""sentence-transformers' MultipleNegativesRankingLoss, to train an
embedder: BertEmbedder's compile() default."""

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
