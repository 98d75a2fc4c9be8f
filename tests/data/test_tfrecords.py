import gzip
import os
import re

import pytest
import tensorflow as tf

from bert_tf.data import tfrecords
from bert_tf.data.tfrecords import RoundRobinWriter


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


def written(path, records):
  with RoundRobinWriter([str(path)]) as writer:
    for record in records:
      writer.write(record)
  return str(path)


RECORDS = [example(value) for value in range(4)]
# Each record: 12-byte header, the example, 4-byte data checksum.
RECORD_BYTES = 12 + len(RECORDS[0]) + 4


def test_read_records_gives_what_tensorflow_reads(tmp_path):
  path = written(tmp_path / "a.tfrecord", RECORDS + [b""])
  assert list(tfrecords.read_records(path)) == [
      record.numpy() for record in tf.data.TFRecordDataset(path)]
  assert tfrecords.count_records(path) == 5


@pytest.mark.parametrize("damage, message", [
    (lambda data: data[:-3], "record 3 (byte {3}): truncated, the file ends "
                             "3 bytes before the record does"),
    (lambda data: data[:3 * RECORD_BYTES + 5],
     "record 3 (byte {3}): truncated, the file ends inside the record's "
     "length"),
    (lambda data: _flip(data, 2 * RECORD_BYTES + 14),
     "record 2 (byte {2}): corrupt, the data's checksum does not match"),
    (lambda data: _flip(data, RECORD_BYTES + 2),
     "record 1 (byte {1}): corrupt, the length's checksum does not match"),
], ids=["truncated data", "truncated header", "flipped data",
        "flipped length"])
def test_damage_is_named_by_file_record_and_offset(tmp_path, damage,
                                                   message):
  path = tmp_path / "a.tfrecord"
  path.write_bytes(damage(open(written(path, RECORDS), "rb").read()))
  offsets = [index * RECORD_BYTES for index in range(4)]
  with pytest.raises(tfrecords.CorruptRecordError,
                     match=re.escape(f"{path}: {message.format(*offsets)}")):
    tfrecords.count_records(str(path))


def _flip(data, position):
  return data[:position] + bytes([data[position] ^ 0xFF]) + data[position + 1:]


def test_other_files_are_told_apart_from_tfrecords(tmp_path):
  text = tmp_path / "corpus.txt"
  text.write_text("The first document.\nIts second sentence.\n")
  packed = tmp_path / "a.tfrecord.gz"
  packed.write_bytes(gzip.compress(b"\0" * 100))
  assert tfrecords.is_tfrecord_file(written(tmp_path / "a.tfrecord", RECORDS))
  assert not tfrecords.is_tfrecord_file(str(text))
  with pytest.raises(tfrecords.CorruptRecordError, match=re.escape(
      f"{text}: not a TFRecord file (it begins like text: 'The first do')")):
    tfrecords.count_records(str(text))
  with pytest.raises(tfrecords.CorruptRecordError,
                     match="not a TFRecord file .it is gzip-compressed"):
    tfrecords.count_records(str(packed))
