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


def positional_names(shapes):
  """The features laid out like input_ids ([batch, seq] or SWAG's [batch,
  4, seq]): what a batch run at another length is cut or traced at; from
  {name: shape}, the batch axis first."""
  sequence_shape = tuple(shapes["input_ids"][1:])
  return [name for name, shape in shapes.items()
          if tuple(shape[1:]) == sequence_shape]


def pad_to_batches(features, batch_size):
  """Features with all-zero rows (is_real_example 0) appended, so that every
  batch is full."""
  count = len(features["is_real_example"])
  missing = -count % batch_size
  return {name: np.concatenate([value, np.zeros((missing,) + value.shape[1:],
                                                value.dtype)])
          for name, value in features.items()}


def training_dataset(features, batch_size, seed=None, by_length=False):
  """Full batches of a feature dict, repeated and shuffled (buffer 100, the
  original's).

  by_length: each batch holds features of one bucket_length, taken in the
  shuffled order as their bucket fills, and is cut to that length (every
  array shaped like input_ids): fewer positions per step, batches no
  longer mixed in length.
  """
  dataset = tf.data.Dataset.from_tensor_slices(features).repeat().shuffle(
      _SHUFFLE_BUFFER, seed=seed)
  if by_length:
    dataset = _length_bucketed(dataset, batch_size)
  else:
    dataset = dataset.batch(batch_size, drop_remainder=True)
  options = tf.data.Options()
  # Each worker reads its share of every batch.
  options.experimental_distribute.auto_shard_policy = \
      tf.data.experimental.AutoShardPolicy.DATA
  return dataset.prefetch(tf.data.AUTOTUNE).with_options(options)


def _length_bucketed(dataset, batch_size):
  """Batches of a dataset of features, grouped by bucket_length and cut."""
  max_length = dataset.element_spec["input_ids"].shape[-1]
  buckets = tf.constant(sorted({bucket_length(length, max_length)
                                for length in range(max_length + 1)}))
  positions = tf.range(1, max_length + 1)
  cut_names = positional_names({name: [None] + spec.shape
                                for name, spec in dataset.element_spec.items()})

  def bucket(feature):
    """The index in buckets of the feature's bucket_length."""
    length = tf.reduce_max(tf.where(feature["input_mask"] != 0, positions, 0))
    return tf.cast(tf.searchsorted(buckets, [length])[0], tf.int64)

  def cut(key, batch):
    return {**batch, **{name: batch[name][..., :buckets[key]]
                        for name in cut_names}}

  return dataset.group_by_window(
      key_func=bucket,
      reduce_func=lambda key, window: window.batch(
          batch_size, drop_remainder=True).map(
              lambda batch: cut(key, batch)),
      window_size=batch_size)


def prediction_batches(features, batch_size):
  """Numpy batches of a feature dict (which must hold is_real_example), in
  order, padded to full batches, with FEATURE_INDEX."""
  features = pad_to_batches(
      {**features, FEATURE_INDEX: np.arange(
          len(features["is_real_example"]), dtype=np.int32)}, batch_size)
  for start in range(0, len(features[FEATURE_INDEX]), batch_size):
    yield {name: value[start:start + batch_size]
           for name, value in features.items()}


def bucket_length(length, max_length):
  """The sequence length a batch whose longest row has `length` tokens runs
  at: `length` rounded up to a multiple of an eighth of the power of two
  above it (8 at least), at most max_length.

  Up to 64 the steps are 8; then 16 up to 128, 32 up to 256, 64 up to 512:
  12 shapes to trace or compile at max_seq_length 128, 20 at 512, and the
  padding past a batch's longest row is under a step (under a quarter of
  the row beyond 64 tokens).
  """
  length = max(int(length), 1)
  step = max(8, 1 << max(0, (length - 1).bit_length() - 3))
  return min(-(-length // step) * step, max_length)


def feature_lengths(features):
  """[features] the positions each feature uses: past its last real token
  (input_mask), in the longest of its sequences (SWAG's four)."""
  mask = features["input_mask"]
  mask = mask.reshape(len(mask), -1, mask.shape[-1]) != 0
  last = mask.shape[-1] - np.argmax(mask[..., ::-1], axis=-1)
  return np.where(mask.any(axis=-1), last, 0).max(axis=-1, initial=0)


def length_bucketed_batches(features, batch_size, chunk_batches=None,
                            round_up=True):
  """As prediction_batches, but each batch cut to its own length.

  The features are sorted by length (feature_lengths) within each chunk of
  chunk_batches batches (None: all of them), and each batch is cut to
  bucket_length of its longest feature (round_up: a few lengths, for XLA
  to compile each), or to that feature's length itself: every array shaped
  like input_ids loses the positions past it. Padding changes no real
  position's output (it is masked out of attention), so the outputs are
  those at full length, in fewer steps. Batches come out of input order;
  FEATURE_INDEX puts them back (Predictor).
  """
  count = len(features["is_real_example"])
  max_length = features["input_ids"].shape[-1]
  cut_names = positional_names({name: value.shape
                                for name, value in features.items()})
  lengths = feature_lengths(features)
  chunk_rows = count if chunk_batches is None else chunk_batches * batch_size
  for start in range(0, count, max(chunk_rows, 1)):
    order = start + np.argsort(lengths[start:start + chunk_rows],
                               kind="stable")
    for first in range(0, len(order), batch_size):
      rows = order[first:first + batch_size]
      length = int(lengths[rows].max())
      length = bucket_length(length, max_length) if round_up else \
          max(length, 1)
      batch = {name: value[rows][..., :length] if name in cut_names
               else value[rows] for name, value in features.items()}
      batch[FEATURE_INDEX] = rows.astype(np.int32)
      yield pad_to_batches(batch, batch_size)
