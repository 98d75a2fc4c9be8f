"""Feature arrays -> batches, the same way for every task.

A task turns its examples into features: a dict of numpy arrays with one
row per feature. Training reads them as a tf.data pipeline, repeated and
shuffled in full batches. Evaluation and prediction read them once, as
numpy batches padded to full size (as the original's PaddingInputExample),
each row carrying its position for Predictor to put the outputs back in
order; Predictor hands each replica its share itself, with no tf.data
iterator (whose autotuning thread, at the end of a long prediction, held
the process up to a minute).
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


def training_dataset(features, batch_size, seed=None):
  """Full batches of a feature dict, repeated and shuffled (buffer 100, the
  original's)."""
  dataset = tf.data.Dataset.from_tensor_slices(features).repeat().shuffle(
      _SHUFFLE_BUFFER, seed=seed)
  options = tf.data.Options()
  # Each worker reads its share of every batch.
  options.experimental_distribute.auto_shard_policy = \
      tf.data.experimental.AutoShardPolicy.DATA
  return (dataset.batch(batch_size, drop_remainder=True)
          .prefetch(tf.data.AUTOTUNE).with_options(options))


def prediction_batches(features, batch_size):
  """Numpy batches of a feature dict (which must hold is_real_example), in
  order, padded to full batches, with FEATURE_INDEX."""
  features = pad_to_batches(
      {**features, FEATURE_INDEX: np.arange(
          len(features["is_real_example"]), dtype=np.int32)}, batch_size)
  for start in range(0, len(features[FEATURE_INDEX]), batch_size):
    yield {name: value[start:start + batch_size]
           for name, value in features.items()}


def length_bucketed_batches(features, batch_size, bucket_width,
                            chunk_batches):
  """As prediction_batches, but each batch cut to its own length.

  Within each chunk of chunk_batches batches the rows are sorted by length
  (input_mask's sum), and each batch is cut to its longest row rounded up
  to a multiple of bucket_width (a few shapes to trace and compile).
  Padding changes no real position's output (it is masked out of
  attention), so the outputs are those at full length, in fewer steps.
  They come back at most one chunk out of input order
  (Predictor.predict_in_order puts them back).
  """
  count = len(features["is_real_example"])
  max_length = features["input_mask"].shape[1]
  chunk_rows = chunk_batches * batch_size
  for start in range(0, count, chunk_rows):
    chunk = {name: value[start:start + chunk_rows]
             for name, value in features.items()}
    chunk[FEATURE_INDEX] = np.arange(
        start, start + len(chunk["is_real_example"]), dtype=np.int32)
    lengths = chunk["input_mask"].sum(axis=1)
    order = np.argsort(lengths, kind="stable")
    for first in range(0, len(order), batch_size):
      rows = order[first:first + batch_size]
      length = min(-(-max(int(lengths[rows].max()), 1) // bucket_width)
                   * bucket_width, max_length)
      yield pad_to_batches(
          {name: value[rows][:, :length]
           if value.ndim > 1 and value.shape[1] == max_length
           else value[rows] for name, value in chunk.items()}, batch_size)
