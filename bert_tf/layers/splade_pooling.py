"""SPLADE pooling, as sentence-transformers' SpladePooling module computes
it, and the top-k selection of sparse embeddings."""

import keras
import tensorflow as tf
from keras import ops

# SpladePooling's pooling_strategy and activation_function values.
POOLING_STRATEGIES = ("max", "sum")
ACTIVATIONS = ("relu", "log1p_relu")


def _log1p(x):
  """log(1 + x) for finite x >= 0, as close as log1p (within 3e-7
  relative), of Log alone: ONNX has no Log1p, so an export would be
  refused. Goldberg's form: log(u) * x / (u - 1) with u = 1 + x rounded;
  x itself where u rounds to 1."""
  u = 1.0 + x
  added = u - 1.0
  rounded_away = added == 0
  return ops.where(rounded_away, x, ops.log(u) * (
      x / ops.where(rounded_away, 1.0, added)))


@keras.saving.register_keras_serializable(package="bert_tf")
class SpladePooling(keras.layers.Layer):
  """Masked-LM logits [batch, seq, vocab] and their input_mask [batch, seq]
  -> one weight per vocabulary token [batch, vocab]: log(1 + relu(logit))
  (log1p_relu: log(1 + log(1 + relu(logit)))) at each real token, then
  their max or sum over the tokens. Padding counts as a logit of 0, which
  every activation maps to 0. Computed in float32.

  Args:
    pooling_strategy: "max" or "sum".
    activation: "relu" or "log1p_relu".
  """

  def __init__(self, pooling_strategy="max", activation="relu", **kwargs):
    super().__init__(**kwargs)
    check_splade(pooling_strategy, activation, type(self).__name__)
    self.pooling_strategy = pooling_strategy
    self.activation = activation

  def call(self, logits, input_mask):
    mask = ops.expand_dims(ops.cast(input_mask, "float32"), -1)
    weights = _log1p(ops.relu(ops.cast(logits, "float32") * mask))
    if self.activation == "log1p_relu":
      weights = _log1p(weights)
    if self.pooling_strategy == "max":
      return ops.max(weights, axis=1)
    return ops.sum(weights, axis=1)

  def get_config(self):
    return {**super().get_config(), "pooling_strategy": self.pooling_strategy,
            "activation": self.activation}


def check_splade(pooling_strategy, activation, where):
  """Raises ValueError, naming the argument, unless both are SPLADE's."""
  if pooling_strategy not in POOLING_STRATEGIES:
    raise ValueError(f"{where}: pooling_strategy={pooling_strategy!r}; "
                     f"expected one of {', '.join(POOLING_STRATEGIES)}")
  if activation not in ACTIVATIONS:
    raise ValueError(f"{where}: activation={activation!r}; expected one "
                     f"of {', '.join(ACTIVATIONS)}")


def top_k_weights(embeddings, k):
  """(ids, weights), each [batch, min(k, vocab)]: each row's k largest
  weights by absolute value, largest first, and their token ids, of dense
  embeddings [batch, vocab] (TensorFlow; serving can call it in its
  graph)."""
  embeddings = tf.convert_to_tensor(embeddings, tf.float32)
  # In int64: a k past int32's range (a folder's max_active_dims) keeps all.
  k = tf.minimum(tf.cast(k, tf.int64),
                 tf.shape(embeddings, out_type=tf.int64)[-1])
  _, ids = tf.math.top_k(tf.abs(embeddings), k=tf.cast(k, tf.int32))
  return ids, tf.gather(embeddings, ids, batch_dims=1)


def sparse_embeddings(embeddings, max_active_dims=None):
  """Dense embeddings [batch, vocab] as a tf.SparseTensor of their
  non-zero weights, each row's max_active_dims largest (top_k_weights)
  where given, as sentence-transformers' select_max_active_dims."""
  embeddings = tf.convert_to_tensor(embeddings, tf.float32)
  if max_active_dims is None:
    return tf.sparse.from_dense(embeddings)
  ids, weights = top_k_weights(embeddings, max_active_dims)
  rows = tf.broadcast_to(tf.range(tf.shape(ids)[0])[:, None], tf.shape(ids))
  kept = tf.not_equal(weights, 0.0)
  indices = tf.cast(tf.stack([rows[kept], ids[kept]], axis=1), tf.int64)
  return tf.sparse.reorder(tf.SparseTensor(
      indices, weights[kept], tf.shape(embeddings, out_type=tf.int64)))
