"""Feature arrays -> tf.data batches, the same way for every task.

A task turns its examples into features: a dict of numpy arrays with one
row per feature. Training reads them repeated and shuffled in full batches;
evaluation and prediction read them once, in order, padded to full batches
(fixed shapes for XLA and TPUs, as the original's PaddingInputExample) with
each row's position for Predictor to put the outputs back in order.
"""

import numpy as np
import tensorflow as tf

# The position of a feature among those predicted; named so that it clashes
# with no task's own keys (SQuAD's example_index is the example a feature
# came from).
FEATURE_INDEX = "feature_index"
# The original's shuffle buffer for fine-tuning input.
_SHUFFLE_BUFFER = 100


def pad_to_batches(features, batch_size):
  """Features with all-zero rows (is_real_example 0) appended, so that every
  batch is full."""
  count = len(features["is_real_example"])
  missing = -count % batch_size
  return {name: np.concatenate([value, np.zeros((missing,) + value.shape[1:],
                                                value.dtype)])
          for name, value in features.items()}


def num_batches(features, batch_size):
  """How many batches feature_dataset makes of them for prediction."""
  return -(-len(features["is_real_example"]) // batch_size)


def feature_dataset(features, batch_size, is_training, seed=None):
  """Batches of a feature dict (which must hold is_real_example).

  Training: repeated, shuffled (buffer 100, the original's), full batches.
  Otherwise: in order, once, padded to full batches (see pad_to_batches),
  with each row's FEATURE_INDEX for Predictor.
  """
  if not is_training:
    features = pad_to_batches(
        {**features, FEATURE_INDEX: np.arange(
            len(features["is_real_example"]), dtype=np.int32)}, batch_size)
  dataset = tf.data.Dataset.from_tensor_slices(features)
  if is_training:
    dataset = dataset.repeat().shuffle(_SHUFFLE_BUFFER, seed=seed)
  options = tf.data.Options()
  options.experimental_distribute.auto_shard_policy = \
      tf.data.experimental.AutoShardPolicy.DATA
  return (dataset.batch(batch_size, drop_remainder=True)
          .prefetch(tf.data.AUTOTUNE).with_options(options))
