"""Sentence pooling and normalisation, as sentence-transformers' Pooling and
Normalize modules compute them."""

import keras
from keras import ops

from bert_tf.checkpoints.names import check_pooling


@keras.saving.register_keras_serializable(package="bert_tf")
class SentencePooling(keras.layers.Layer):
  """Token vectors [batch, seq, hidden] and their input_mask [batch, seq] ->
  one vector per text [batch, hidden * len(modes)], the modes' vectors
  concatenated in order:

    cls: the first token's ([CLS]);
    max: the largest value of each dimension over the real tokens;
    mean: the mean over the real tokens ([CLS] and [SEP] included);
    mean_sqrt_len_tokens: their sum over the square root of their count.

  Computed in float32 whatever the tokens' dtype.
  """

  def __init__(self, modes=("mean",), **kwargs):
    super().__init__(**kwargs)
    self.modes = check_pooling(modes, type(self).__name__)

  def call(self, token_vectors, input_mask):
    token_vectors = ops.cast(token_vectors, "float32")
    mask = ops.expand_dims(ops.cast(input_mask, "float32"), -1)
    count = ops.maximum(ops.sum(mask, axis=1), 1e-9)
    pooled = []
    for mode in self.modes:
      if mode == "cls":
        pooled.append(token_vectors[:, 0])
      elif mode == "max":
        pooled.append(ops.max(ops.where(mask > 0, token_vectors,
                                        float("-inf")), axis=1))
      else:
        total = ops.sum(token_vectors * mask, axis=1)
        pooled.append(total / (count if mode == "mean" else ops.sqrt(count)))
    return pooled[0] if len(pooled) == 1 else ops.concatenate(pooled, -1)

  def get_config(self):
    return {**super().get_config(), "modes": list(self.modes)}


def l2_normalize(vectors):
  """Each row over its L2 norm (at least 1e-12), as torch's
  F.normalize."""
  norm = ops.sqrt(ops.sum(ops.square(vectors), axis=-1, keepdims=True))
  return vectors / ops.maximum(norm, 1e-12)
