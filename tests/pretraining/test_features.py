import numpy as np
import pytest
import tensorflow as tf

from bert_tf.data.tfrecords import RoundRobinWriter
from bert_tf.pretraining import features as pretraining_features
from bert_tf.pretraining.instances import TrainingInstance

INSTANCE = TrainingInstance(input_ids=[101, 7, 8, 102, 9, 102],
                            first_segment_length=4,
                            masked_lm_positions=[2, 4],
                            masked_lm_ids=[5, 6], is_random_next=True)


def write(path, instances, max_seq_length=8, max_predictions=3):
  with RoundRobinWriter([str(path)]) as writer:
    for instance in instances:
      writer.write(pretraining_features.serialize_instance(
          instance, max_seq_length, max_predictions))
  return str(path)


def expected_example(values):
  def feature(value):
    if isinstance(value[0], float):
      return tf.train.Feature(float_list=tf.train.FloatList(value=value))
    return tf.train.Feature(int64_list=tf.train.Int64List(value=value))
  return tf.train.Example(features=tf.train.Features(
      feature={name: feature(value) for name, value in values.items()}))


EXPECTED = {
    "input_ids": [101, 7, 8, 102, 9, 102, 0, 0],
    "input_mask": [1, 1, 1, 1, 1, 1, 0, 0],
    "segment_ids": [0, 0, 0, 0, 1, 1, 0, 0],
    "masked_lm_positions": [2, 4, 0],
    "masked_lm_ids": [5, 6, 0],
    "masked_lm_weights": [1.0, 1.0, 0.0],
    "next_sentence_labels": [1],
}


def test_bytes_equal_protobufs_deterministic_serialisation():
  assert pretraining_features.serialize_instance(INSTANCE, 8, 3) == (
      expected_example(EXPECTED).SerializeToString(deterministic=True))


def test_large_ids_and_lengths_encode_as_protobuf_does():
  ids = [101] + list(range(20000, 20000 + 300, 3)) + [102, 119546, 102]
  instance = TrainingInstance(input_ids=ids, first_segment_length=len(ids) - 2,
                              masked_lm_positions=list(range(1, 80)),
                              masked_lm_ids=[70000 + i for i in range(79)],
                              is_random_next=False)
  values = {
      "input_ids": ids + [0] * (512 - len(ids)),
      "input_mask": [1] * len(ids) + [0] * (512 - len(ids)),
      "segment_ids": [0] * (len(ids) - 2) + [1, 1] + [0] * (512 - len(ids)),
      "masked_lm_positions": list(range(1, 80)) + [0],
      "masked_lm_ids": [70000 + i for i in range(79)] + [0],
      "masked_lm_weights": [1.0] * 79 + [0.0],
      "next_sentence_labels": [0],
  }
  assert pretraining_features.serialize_instance(instance, 512, 80) == (
      expected_example(values).SerializeToString(deterministic=True))


def test_records_parse_with_the_training_spec(tmp_path):
  path = write(tmp_path / "a.tfrecord", [INSTANCE])
  record = next(iter(tf.data.TFRecordDataset(path)))
  parsed = tf.io.parse_single_example(
      record, pretraining_features.feature_spec(8, 3))
  for name, values in EXPECTED.items():
    np.testing.assert_array_equal(parsed[name], values)


def test_instance_longer_than_max_seq_length_is_refused():
  with pytest.raises(ValueError, match="exceeds max_seq_length 5"):
    pretraining_features.serialize_instance(INSTANCE, 5, 3)


def test_check_records_names_file_record_and_flag(tmp_path):
  path = write(tmp_path / "a.tfrecord", [INSTANCE] * 3)
  assert pretraining_features.check_records(path, 8, 3) == 3
  with pytest.raises(ValueError, match=(
      "a.tfrecord: record 0 has 8 input_ids, but --max_seq_length=128; "
      "pass --max_seq_length=8")):
    pretraining_features.check_records(path, 128, 3)
  with pytest.raises(ValueError, match="pass --max_predictions_per_seq=3"):
    pretraining_features.check_records(path, 8, 20)


def test_every_record_is_checked_not_only_the_first(tmp_path):
  path = tmp_path / "mixed.tfrecord"
  with RoundRobinWriter([str(path)]) as writer:
    for max_seq_length in (8, 8, 16):
      writer.write(pretraining_features.serialize_instance(
          INSTANCE, max_seq_length, 3))
  assert pretraining_features.check_records(str(path), 8, 3,
                                            max_records=2) == 2
  with pytest.raises(ValueError, match="mixed.tfrecord: record 2 has 16 "
                     "input_ids, but --max_seq_length=8"):
    pretraining_features.check_records(str(path), 8, 3)


def test_ids_past_the_vocabulary_are_named(tmp_path):
  path = write(tmp_path / "a.tfrecord", [INSTANCE])
  assert pretraining_features.check_records(path, 8, 3, vocab_size=103) == 1
  with pytest.raises(ValueError, match="a.tfrecord: record 0 has input_ids "
                     "102, but the model's vocab_size is 102"):
    pretraining_features.check_records(path, 8, 3, vocab_size=102)


def test_a_file_of_other_records_is_named(tmp_path):
  path = str(tmp_path / "other.tfrecord")
  with tf.io.TFRecordWriter(path) as writer:
    writer.write(tf.train.Example().SerializeToString())
    writer.write(b"\xff not a protocol buffer")
  with pytest.raises(ValueError, match="other.tfrecord: record 0: not a "
                     "pretraining example"):
    pretraining_features.check_records(path, 8, 3)
  with tf.io.TFRecordWriter(path) as writer:
    writer.write(b"\xff not a protocol buffer")
  with pytest.raises(ValueError, match="other.tfrecord: record 0 is not a "
                     "tf.train.Example"):
    pretraining_features.check_records(path, 8, 3)
