import os

import pytest
import tensorflow as tf

from bert_tf.data.tfrecord_writer import RoundRobinWriter


def example(value):
  return tf.train.Example(features=tf.train.Features(feature={
      "b": tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))}
  )).SerializeToString()


def values(path):
  """Read back by TensorFlow, which checks every length and data CRC."""
  return [tf.train.Example.FromString(record.numpy())
          .features.feature["b"].int64_list.value[0]
          for record in tf.data.TFRecordDataset(path)]


def test_round_robin_over_outputs(tmp_path):
  outputs = [str(tmp_path / "x.tfrecord"), str(tmp_path / "y.tfrecord")]
  with RoundRobinWriter(outputs) as writer:
    for value in range(5):
      writer.write(example(value))
  assert values(outputs[0]) == [0, 2, 4] and values(outputs[1]) == [1, 3]
  assert writer.written == 5
  assert sorted(os.listdir(tmp_path)) == ["x.tfrecord", "y.tfrecord"]


def test_failure_leaves_existing_output_and_no_temporary_file(tmp_path):
  output = tmp_path / "x.tfrecord"
  output.write_bytes(b"earlier")
  with pytest.raises(RuntimeError):
    with RoundRobinWriter([str(output)]) as writer:
      writer.write(example(1))
      raise RuntimeError("interrupted")
  assert output.read_bytes() == b"earlier"
  assert os.listdir(tmp_path) == ["x.tfrecord"]


def test_framing_equals_tensorflows_writer(tmp_path):
  ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
  records = [example(value) for value in (0, 300, 1 << 40)] + [b"", b"x" * 999]
  with RoundRobinWriter([ours]) as writer:
    for record in records:
      writer.write(record)
  with tf.io.TFRecordWriter(theirs) as writer:
    for record in records:
      writer.write(record)
  with open(ours, "rb") as one, open(theirs, "rb") as other:
    assert one.read() == other.read()
