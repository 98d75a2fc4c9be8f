"""A model's outputs over a dataset, on any tf.distribute strategy.

Prediction needs no optimizer and no checkpoints: a task predicts its dev
and test sets with the model it trained, extract_features with a model it
only loaded. Each replica computes its share of every numpy batch; the
shares are gathered and put back in input order by the features'
FEATURE_INDEX (bert_tf.data.batching), and the rows padding added
(is_real_example 0) are dropped.
"""

import numpy as np
import tensorflow as tf

from bert_tf.data.batching import FEATURE_INDEX, pad_to_batches

_PASSED_THROUGH = (FEATURE_INDEX, "is_real_example")


class Predictor:
  """Runs a model in inference mode over batches of features.

  Args:
    strategy: the tf.distribute.Strategy the model was created under.
    model: a keras model taking the feature dict.
    use_xla: compile the forward pass with XLA.
  """

  def __init__(self, strategy, model, use_xla=False):
    self.strategy = strategy
    self.model = model
    self._model_outputs = tf.function(
        lambda features: self.model(features, training=False),
        jit_compile=use_xla)

  def predict(self, batches):
    """The model's outputs for all batches, in input order.

    Args:
      batches: global batches of numpy features including FEATURE_INDEX
        (int32) and is_real_example, as bert_tf.data.batching.
        prediction_batches makes them.

    Returns:
      The model's output structure (dicts, lists of layers, ...) with numpy
      arrays [number of real features, ...] as leaves.
    """
    outputs, indexes = zip(*self.predict_batches(batches))
    order = np.argsort(np.concatenate(indexes), kind="stable")
    return tf.nest.map_structure(
        lambda *parts: np.concatenate(parts)[order], *outputs)

  def predict_in_order(self, batches):
    """Yields (FEATURE_INDEX, that feature's outputs) for 0, 1, 2, ...:
    for batches out of order (batching.length_bucketed_batches), holding
    back only the features that come early."""
    pending, next_index = {}, 0
    for outputs, indexes in self.predict_batches(batches):
      for row, index in enumerate(indexes.tolist()):
        pending[index] = tf.nest.map_structure(
            lambda value, row=row: value[row], outputs)
      while next_index in pending:
        yield next_index, pending.pop(next_index)
        next_index += 1

  def predict_batches(self, batches):
    """Yields, per batch, (outputs, their FEATURE_INDEX values) as numpy,
    the real features' rows only."""
    for batch in batches:
      outputs, passed = self._predict_step(self._distributed(batch))
      keep = passed["is_real_example"].numpy() > 0
      yield (tf.nest.map_structure(lambda value: value.numpy()[keep],
                                   outputs),
             passed[FEATURE_INDEX].numpy()[keep])

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

  # Batches of several lengths (batching.length_bucketed_batches): from the
  # second length on, one trace with a None sequence axis serves them all.
  @tf.function(reduce_retracing=True)
  def _predict_step(self, features):
    outputs = self.strategy.run(self._replica_outputs, args=(features,))
    return tf.nest.map_structure(
        lambda value: self.strategy.gather(value, axis=0), outputs)

  def _replica_outputs(self, features):
    passed = {name: features[name] for name in _PASSED_THROUGH}
    return self._model_outputs(features), passed
