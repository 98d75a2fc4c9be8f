"""A model's outputs over a dataset, on any tf.distribute strategy.

Prediction needs no optimizer and no checkpoints: a task predicts its dev
and test sets with the model it trained, extract_features with a model it
only loaded. Features are grouped by length and each batch runs at its own
length (bert_tf.data.batching.length_bucketed_batches): real text is mostly
far shorter than max_seq_length, and padding changes no real position's
output. Each replica computes its share of every numpy batch; the shares
are gathered and put back in input order by the features' FEATURE_INDEX,
and the rows padding added (is_real_example 0) are dropped.
"""

import numpy as np
import tensorflow as tf

from bert_tf.data import batching
from bert_tf.data.batching import FEATURE_INDEX, pad_to_batches

_PASSED_THROUGH = (FEATURE_INDEX, "is_real_example")


class Predictor:
  """Runs a model in inference mode over batches of features.

  Args:
    strategy: the tf.distribute.Strategy the model was created under.
    model: a keras model taking the feature dict.
    use_xla: compile the forward pass with XLA.
    round_lengths: run each batch at its bucket_length rather than at its
      longest feature's length (batching.length_bucketed_batches): XLA
      compiles each length, while without it one trace serves them all.
  """

  def __init__(self, strategy, model, use_xla=False, round_lengths=True):
    self.strategy = strategy
    self.model = model
    self._round_lengths = round_lengths
    self._model_outputs = tf.function(
        lambda features: self.model(features, training=False),
        jit_compile=use_xla)
    # Whether one trace serves batches of any size (_trace_for_any_batch);
    # None until the first batch.
    self._any_batch_traced = None

  def predict(self, features, batch_size, by_length=True):
    """The model's outputs for every feature, in input order.

    Args:
      features: {name: numpy array}, one row per feature, with
        is_real_example.
      batch_size: the global batch size.
      by_length: run each batch at its own length
        (batching.length_bucketed_batches): the same outputs in fewer
        steps. False runs every batch at the features' full length.

    Returns:
      The model's output structure (dicts, lists of layers, ...) with numpy
      arrays [number of real features, ...] as leaves, at the features' full
      length: positions past a batch's own length, which no real token
      reaches, hold -inf (0 for integers).
    """
    batch_size = _rows_per_batch(batch_size, features)
    if by_length:
      batches = batching.length_bucketed_batches(
          features, batch_size, round_up=self._round_lengths)
    else:
      batches = batching.prediction_batches(features, batch_size)
    full_length = features["input_ids"].shape[-1]
    outputs, indexes, position_axes = [], [], None
    for batch in batches:
      batch_outputs, batch_indexes = self._predict_batch(batch)
      if batch["input_ids"].shape[-1] < full_length:
        position_axes = position_axes or self._position_axes(batch)
        batch_outputs = tf.nest.pack_sequence_as(batch_outputs, [
            _padded(value, axes, full_length) for value, axes in
            zip(tf.nest.flatten(batch_outputs), position_axes)])
      outputs.append(batch_outputs)
      indexes.append(batch_indexes)
    order = np.argsort(np.concatenate(indexes), kind="stable")
    return tf.nest.map_structure(
        lambda *parts: np.concatenate(parts)[order], *outputs)

  def predict_in_order(self, features, batch_size, chunk_batches):
    """Yields (feature index, that feature's outputs) for 0, 1, 2, ...,
    each at its batch's own length: the features are sorted by length
    within chunks of chunk_batches batches, so at most a chunk's outputs
    are held back at a time."""
    pending, next_index = {}, 0
    for batch in batching.length_bucketed_batches(
        features, _rows_per_batch(batch_size, features), chunk_batches,
        self._round_lengths):
      outputs, indexes = self._predict_batch(batch)
      for row, index in enumerate(indexes.tolist()):
        pending[index] = tf.nest.map_structure(
            lambda value, row=row: value[row], outputs)
      while next_index in pending:
        yield next_index, pending.pop(next_index)
        next_index += 1

  def _predict_batch(self, batch):
    """(outputs, their FEATURE_INDEX values) of one numpy batch, the real
    features' rows only."""
    features = self._distributed(batch)
    if self._any_batch_traced is None:
      self._trace_for_any_batch(features)
    outputs, passed = self._predict_step(features)
    keep = passed["is_real_example"].numpy() > 0
    return (tf.nest.map_structure(lambda value: value.numpy()[keep], outputs),
            passed[FEATURE_INDEX].numpy()[keep])

  def _trace_for_any_batch(self, features):
    """Traces _predict_step once for batches of any size and length, where
    the features are plain tensors (one replica): every batch then runs that
    trace. Its sizes known only at run time keep TensorFlow's graph
    rewrites from folding the row count that lets them fuse a bfloat16
    LayerNorm (layers.normalization.LayerNorm) into one kernel. Several
    replicas trace as reduce_retracing has it."""
    self._any_batch_traced = all(isinstance(value, tf.Tensor)
                                 for value in features.values())
    if self._any_batch_traced:
      self._predict_step.get_concrete_function(
          _any_length_specs(features, None))

  def _position_axes(self, batch):
    """The axes of each output (in tf.nest.flatten order) that run along
    the input's positions: those of unknown size when the model is traced
    for an unknown length. Traced in a replica, for a replica's rows, as
    _predict_step's trace for every later length calls the model: that
    call then finds this trace instead of making another."""
    rows = None if self._any_batch_traced else -(
        -len(batch["is_real_example"]) // self.strategy.num_replicas_in_sync)
    specs = _any_length_specs(batch, rows)
    outputs = self.strategy.experimental_local_results(self.strategy.run(
        lambda: self._model_outputs.get_concrete_function(
            specs).structured_outputs))[0]
    return [[axis for axis in range(1, output.shape.rank)
             if output.shape[axis] is None]
            for output in tf.nest.flatten(outputs)]

  def _distributed(self, batch):
    """A global batch as each replica's consecutive share (rows of
    is_real_example 0 added so that the replicas divide it)."""
    replicas = self.strategy.num_replicas_in_sync
    batch = pad_to_batches(batch, replicas)
    share = len(batch["is_real_example"]) // replicas

    def replica_share(context):
      start = context.replica_id_in_sync_group * share
      return {name: tf.constant(value[start:start + share])
              for name, value in batch.items()}

    return self.strategy.experimental_distribute_values_from_function(
        replica_share)

  # Batches of several sizes and lengths: one trace serves them all
  # (_trace_for_any_batch; with several replicas, reduce_retracing's from
  # the second length on). With XLA, _model_outputs still compiles each of
  # bucket_length's few lengths.
  @tf.function(reduce_retracing=True)
  def _predict_step(self, features):
    outputs = self.strategy.run(self._replica_outputs, args=(features,))
    return tf.nest.map_structure(
        lambda value: self.strategy.gather(value, axis=0), outputs)

  def _replica_outputs(self, features):
    passed = {name: features[name] for name in _PASSED_THROUGH}
    return self._model_outputs(features), passed


def _any_length_specs(features, rows):
  """{name: TensorSpec} of features at any length (the positional axes of
  unknown size), `rows` in the batch axis (None: any)."""
  positional = batching.positional_names(
      {name: value.shape for name, value in features.items()})
  return {name: tf.TensorSpec(
      (rows,) + (tuple(value.shape[1:-1]) + (None,) if name in positional
                 else tuple(value.shape[1:])), value.dtype)
          for name, value in features.items()}


def _rows_per_batch(batch_size, features):
  """batch_size, or fewer where there are fewer features: batches are
  padded to one size (one trace serves them all), and a batch larger than
  the features would be padding rows alone."""
  return min(batch_size, max(len(features["is_real_example"]), 1))


def _padded(value, axes, length):
  """value with each of `axes` filled out to `length`: -inf for floats
  (never a candidate where positions are ranked, as SQuAD's), else 0."""
  if not axes:
    return value
  shape = list(value.shape)
  for axis in axes:
    shape[axis] = length
  fill = -np.inf if np.issubdtype(value.dtype, np.floating) else 0
  padded = np.full(shape, fill, value.dtype)
  padded[tuple(slice(0, size) for size in value.shape)] = value
  return padded
