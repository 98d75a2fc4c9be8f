"""The original pretraining TFRecord features: names, lengths and types.

create_pretraining_data writes them and run_pretraining parses them; one
definition keeps the two in step.
"""

import tensorflow as tf

INT_FEATURES_PER_TOKEN = ("input_ids", "input_mask", "segment_ids")
INT_FEATURES_PER_PREDICTION = ("masked_lm_positions", "masked_lm_ids")
FLOAT_FEATURES_PER_PREDICTION = ("masked_lm_weights",)
NEXT_SENTENCE_LABELS = "next_sentence_labels"


def feature_spec(max_seq_length, max_predictions_per_seq):
  """The tf.io.parse_single_example spec, as the original run_pretraining."""
  spec = {name: tf.io.FixedLenFeature([max_seq_length], tf.int64)
          for name in INT_FEATURES_PER_TOKEN}
  spec.update({name: tf.io.FixedLenFeature([max_predictions_per_seq],
                                           tf.int64)
               for name in INT_FEATURES_PER_PREDICTION})
  spec.update({name: tf.io.FixedLenFeature([max_predictions_per_seq],
                                           tf.float32)
               for name in FLOAT_FEATURES_PER_PREDICTION})
  spec[NEXT_SENTENCE_LABELS] = tf.io.FixedLenFeature([1], tf.int64)
  return spec


def instance_to_example(instance, max_seq_length, max_predictions_per_seq):
  """A TrainingInstance as the original's padded tf.train.Example."""
  length = len(instance.input_ids)
  if length > max_seq_length:
    raise ValueError(f"instance of {length} tokens exceeds max_seq_length "
                     f"{max_seq_length}")
  padding = [0] * (max_seq_length - length)
  second_segment_length = length - instance.first_segment_length
  num_predictions = len(instance.masked_lm_positions)
  prediction_padding = [0] * (max_predictions_per_seq - num_predictions)

  def ints(values):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=values))

  return tf.train.Example(features=tf.train.Features(feature={
      "input_ids": ints(instance.input_ids + padding),
      "input_mask": ints([1] * length + padding),
      "segment_ids": ints([0] * instance.first_segment_length
                          + [1] * second_segment_length + padding),
      "masked_lm_positions": ints(instance.masked_lm_positions
                                  + prediction_padding),
      "masked_lm_ids": ints(instance.masked_lm_ids + prediction_padding),
      "masked_lm_weights": tf.train.Feature(float_list=tf.train.FloatList(
          value=[1.0] * num_predictions + prediction_padding)),
      NEXT_SENTENCE_LABELS: ints([int(instance.is_random_next)]),
  }))


def example_lengths(example):
  """(max_seq_length, max_predictions_per_seq) a parsed Example was padded to.

  Raises:
    ValueError: a feature of the original layout is missing.
  """
  features = example.features.feature
  missing = [name for name in feature_spec(1, 1) if name not in features]
  if missing:
    raise ValueError(f"not a pretraining example: no feature(s) {missing}")

  def length(name):
    feature = features[name]
    return len(feature.int64_list.value) + len(feature.float_list.value)

  return length("input_ids"), length("masked_lm_positions")


def check_file_lengths(path, max_seq_length, max_predictions_per_seq,
                       max_records=None):
  """Checks that records were written for these flags, before training dies
  on "Can't parse serialized Example".

  Args:
    path: a TFRecord file of pretraining examples.
    max_seq_length, max_predictions_per_seq: the training flags.
    max_records: how many records to check (None: all).

  Returns:
    The number of records checked.

  Raises:
    ValueError: naming the file, the record and the flag to change.
  """
  checked = 0
  for index, record in enumerate(tf.data.TFRecordDataset(path)):
    if max_records is not None and index >= max_records:
      break
    try:
      seq_length, predictions = example_lengths(
          tf.train.Example.FromString(record.numpy()))
    except ValueError as error:
      raise ValueError(f"{path}: record {index}: {error}") from None
    if seq_length != max_seq_length:
      raise ValueError(
          f"{path}: record {index} has {seq_length} input_ids, but "
          f"--max_seq_length={max_seq_length}; pass --max_seq_length="
          f"{seq_length} (the value create_pretraining_data was run with)")
    if predictions != max_predictions_per_seq:
      raise ValueError(
          f"{path}: record {index} has {predictions} masked_lm_positions, "
          f"but --max_predictions_per_seq={max_predictions_per_seq}; pass "
          f"--max_predictions_per_seq={predictions} (the value "
          f"create_pretraining_data was run with)")
    checked += 1
  return checked
