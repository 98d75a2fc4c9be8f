"""A model's outputs over a dataset, on any tf.distribute strategy.

Prediction needs no optimizer and no checkpoints: a task predicts its dev
and test sets with the model it trained, extract_features with a model it
only loaded. Each replica computes its share of every batch; the shares are
gathered and put back in input order by the features' FEATURE_INDEX
(bert_tf.data.batching), and the rows padding added (is_real_example 0)
are dropped.
"""

import numpy as np
import tensorflow as tf

from bert_tf.data.batching import FEATURE_INDEX

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

  def predict(self, dataset, num_batches):
    """The model's outputs for num_batches batches, in input order.

    Args:
      dataset: global batches of features including FEATURE_INDEX (int32)
        and is_real_example, as bert_tf.data.batching.feature_dataset makes
        them.
      num_batches: how many batches to read.

    Returns:
      The model's output structure (dicts, lists of layers, ...) with numpy
      arrays [number of real features, ...] as leaves.
    """
    iterator = iter(self.strategy.experimental_distribute_dataset(dataset))
    batches = [self._predict_step(next(iterator)) for _ in range(num_batches)]
    outputs, passed = zip(*batches)
    keep = np.concatenate([part["is_real_example"].numpy()
                           for part in passed]) > 0
    order = np.argsort(np.concatenate([part[FEATURE_INDEX].numpy()
                                       for part in passed])[keep],
                       kind="stable")
    return tf.nest.map_structure(
        lambda *parts: np.concatenate([part.numpy() for part in parts])[
            keep][order], *outputs)

  @tf.function
  def _predict_step(self, features):
    outputs = self.strategy.run(self._replica_outputs, args=(features,))
    return tf.nest.map_structure(
        lambda value: self.strategy.gather(value, axis=0), outputs)

  def _replica_outputs(self, features):
    passed = {name: features[name] for name in _PASSED_THROUGH}
    return self._model_outputs(features), passed
