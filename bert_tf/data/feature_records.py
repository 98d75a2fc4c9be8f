"""Feature arrays -> a TFRecord file of tf.train.Example, as the original
writes its fine-tuning features (run_squad's train.tf_record), so that they
can be inspected and reused."""

import tensorflow as tf

from bert_tf.data.tfrecords import RoundRobinWriter


def write_feature_records(path, features, names):
  """Writes each row's `names` features as int64 lists, in that order;
  the file appears only when complete (RoundRobinWriter is atomic)."""
  columns = [features[name].reshape(len(features[name]), -1).tolist()
             for name in names]
  with RoundRobinWriter([path]) as writer:
    for row in zip(*columns):
      writer.write(tf.train.Example(features=tf.train.Features(feature={
          name: tf.train.Feature(int64_list=tf.train.Int64List(value=values))
          for name, values in zip(names, row)})).SerializeToString())
  return len(columns[0]) if columns else 0
