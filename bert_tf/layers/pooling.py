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

    cls: the first pooled token's ([CLS], unless a prompt is left out);
    max: the largest value of each dimension over the pooled tokens;
    mean: their mean ([CLS] and [SEP] included);
    mean_sqrt_len_tokens: their sum over the square root of their count;
    weightedmean: their mean weighted by position (1 for [CLS], 2 for
      the next, ...).

  The pooled tokens are the real ones, less the first prompt_length of
  each row where it is given (sentence-transformers' include_prompt
  false: its prompt_length counts [CLS] and the prompt's word pieces). A
  row left with none pools to zeros (max: -inf; cls: position 0), as in
  sentence-transformers. Computed in float32 whatever the tokens' dtype.
  """

  def __init__(self, modes=("mean",), **kwargs):
    super().__init__(**kwargs)
    self.modes = check_pooling(modes, type(self).__name__)

  def call(self, token_vectors, input_mask, prompt_length=None):
    token_vectors = ops.cast(token_vectors, "float32")
    input_mask = ops.cast(input_mask, "float32")
    # [1, seq]: 0, 1, 2, ...
    positions = ops.expand_dims(ops.arange(ops.shape(input_mask)[1],
                                           dtype="float32"), 0)
    pooled_mask = input_mask
    if prompt_length is not None:
      prompt_length = ops.expand_dims(ops.cast(prompt_length, "float32"), -1)
      pooled_mask = input_mask * ops.cast(positions >= prompt_length,
                                          "float32")
    mask = ops.expand_dims(pooled_mask, -1)
    count = ops.maximum(ops.sum(mask, axis=1), 1e-9)
    pooled = []
    for mode in self.modes:
      if mode == "cls":
        first = _first_marked(pooled_mask)
        pooled.append(ops.take_along_axis(
            token_vectors, first[:, None, None], axis=1)[:, 0])
      elif mode == "max":
        pooled.append(ops.max(ops.where(mask > 0, token_vectors,
                                        float("-inf")), axis=1))
      elif mode == "weightedmean":
        pooled.append(_weighted_mean(token_vectors, input_mask, mask,
                                     positions))
      else:
        total = ops.sum(token_vectors * mask, axis=1)
        pooled.append(total / (count if mode == "mean" else ops.sqrt(count)))
    return pooled[0] if len(pooled) == 1 else ops.concatenate(pooled, -1)

  def get_config(self):
    return {**super().get_config(), "modes": list(self.modes)}


def _weighted_mean(token_vectors, input_mask, mask, positions):
  """sentence-transformers' weightedmean: the pooled tokens (mask [batch,
  seq, 1]) weighted by their position counted from the first real token
  of input_mask, from 1."""
  # [batch, 1]: the padding before a row's first real token.
  padding = ops.cast(_first_marked(input_mask), "float32")[:, None]
  weights = mask * ops.expand_dims(positions + 1 - padding, -1)
  return ops.sum(token_vectors * weights, axis=1) / ops.maximum(
      ops.sum(weights, axis=1), 1e-9)


def _first_marked(mask):
  """[batch] int32: the first position of each row where mask [batch,
  seq] is not 0 (0 where none is). An argmax of integers: Keras' argmax
  of floats takes bit operations that ONNX and LiteRT do not have."""
  return ops.argmax(ops.cast(mask > 0, "int32"), axis=1)


def l2_normalize(vectors):
  """Each row over its L2 norm (at least 1e-12), as torch's
  F.normalize."""
  norm = ops.sqrt(ops.sum(ops.square(vectors), axis=-1, keepdims=True))
  return vectors / ops.maximum(norm, 1e-12)
