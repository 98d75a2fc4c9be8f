import os

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.data.tfrecords import RoundRobinWriter
from bert_tf.pretraining import features as pretraining_features
from bert_tf.pretraining.dataset import find_bad_record, pretraining_dataset
from bert_tf.pretraining.instances import TrainingInstance


def write_file(path, first_ids, count=3, max_seq_length=8):
  with RoundRobinWriter([str(path)]) as writer:
    for offset in range(count):
      writer.write(pretraining_features.serialize_instance(TrainingInstance(
          input_ids=[101, first_ids + offset, 102, 9, 102],
          first_segment_length=3, masked_lm_positions=[1],
          masked_lm_ids=[5], is_random_next=False), max_seq_length, 2))
  return str(path)


def first_ids(dataset, batches):
  return [batch["input_ids"][:, 1].numpy().tolist()
          for batch in dataset.take(batches)]


def test_unshuffled_training_reads_in_order_and_repeats(tmp_path):
  path = write_file(tmp_path / "a.tfrecord", 10)
  dataset = pretraining_dataset([path], 8, 2, batch_size=2, is_training=True,
                                shuffle_buffer_size=0)
  assert first_ids(dataset, 3) == [[10, 11], [12, 10], [11, 12]]
  batch = next(iter(dataset))
  assert batch["input_ids"].dtype == tf.int32
  assert batch["masked_lm_weights"].dtype == tf.float32
  np.testing.assert_array_equal(batch["next_sentence_labels"], [[0], [0]])


def test_training_shuffles_records_across_files(tmp_path):
  paths = [write_file(tmp_path / "a.tfrecord", 10, count=20),
           write_file(tmp_path / "b.tfrecord", 50, count=20)]
  seen = sum(first_ids(pretraining_dataset(
      paths, 8, 2, batch_size=8, is_training=True, seed=3), 5), [])
  assert seen != sorted(seen)
  assert any(value >= 50 for value in seen) and any(value < 50
                                                    for value in seen)


def test_evaluation_reads_files_in_order(tmp_path):
  paths = [write_file(tmp_path / "a.tfrecord", 10, count=2),
           write_file(tmp_path / "b.tfrecord", 50, count=2)]
  dataset = pretraining_dataset(paths, 8, 2, batch_size=2, is_training=False)
  assert first_ids(dataset, 3) == [[10, 11], [50, 51], [10, 11]]


def test_wrong_lengths_name_the_file_and_the_flag(tmp_path):
  path = write_file(tmp_path / "a.tfrecord", 10)
  with pytest.raises(ValueError, match="a.tfrecord: record 0 has 8 input_ids, "
                     "but --max_seq_length=128; pass --max_seq_length=8"):
    pretraining_dataset([path], 128, 2, batch_size=2, is_training=True)


def test_a_text_file_or_a_larger_vocabulary_is_refused_at_once(tmp_path):
  text = tmp_path / "corpus.txt"
  text.write_text("The first document.\n")
  with pytest.raises(ValueError, match="corpus.txt: not a TFRecord file"):
    pretraining_dataset([str(text)], 8, 2, batch_size=2, is_training=True)
  path = write_file(tmp_path / "a.tfrecord", 10)
  with pytest.raises(ValueError, match="record 0 has input_ids 101, but the "
                     "model's vocab_size is 100"):
    pretraining_dataset([path], 8, 2, batch_size=2, is_training=True,
                        vocab_size=100)


def test_find_bad_record_names_the_damaged_file(tmp_path):
  good = write_file(tmp_path / "good.tfrecord", 10)
  bad = write_file(tmp_path / "bad.tfrecord", 10, count=40)
  with open(bad, "r+b") as damaged:
    damaged.truncate(os.path.getsize(bad) - 7)
  # Only the first record is checked up front: the pipeline is built ...
  dataset = pretraining_dataset([good, bad], 8, 2, batch_size=2,
                                is_training=False)
  with pytest.raises(tf.errors.DataLossError):  # ... and fails unnamed.
    for _ in dataset.take(100):
      pass
  error = find_bad_record([good, bad], 8, 2)
  assert str(error).startswith(f"{bad}: record 39 (byte ")
  assert "truncated" in str(error)
  assert find_bad_record([good], 8, 2) is None
