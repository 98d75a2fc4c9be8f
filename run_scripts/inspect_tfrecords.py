"""Prints pretraining TFRecords readably and checks their feature lengths.

    python run_scripts/inspect_tfrecords.py --input_file=out.tfrecord \\
      --vocab_file=vocab.txt --max_examples=3 \\
      --max_seq_length=128 --max_predictions_per_seq=20

Each example shows its tokens with the masked positions as
[shown=original], its segments and its next-sentence label, like the log of
the original create_pretraining_data.py. With --max_seq_length and
--max_predictions_per_seq, every record is checked against them, so that a
mismatch with run_pretraining's flags is caught before training; without
them, the lengths the file was written with are reported.
"""

import sys

import tensorflow as tf
from absl import app, flags

from bert_tf import tokenization
from bert_tf.data import pretraining_features

flags.DEFINE_string("input_file", None,
                    "TFRecord file(s): comma-separated globs.")
flags.DEFINE_string("vocab_file", None,
                    "vocab.txt to show tokens; ids are shown without it.")
flags.DEFINE_integer("max_examples", 5, "How many examples to print.")
flags.DEFINE_integer("max_seq_length", None,
                     "Check every record was written for this length.")
flags.DEFINE_integer("max_predictions_per_seq", None,
                     "Check every record was written for this many "
                     "predictions.")
FLAGS = flags.FLAGS


def describe(example, tokenizer):
  """Lines describing one example, masked positions as [shown=original]."""
  features = example.features.feature
  ids = list(features["input_ids"].int64_list.value)
  length = sum(features["input_mask"].int64_list.value)
  names = (tokenizer.convert_ids_to_tokens(ids[:length]) if tokenizer
           else [str(token_id) for token_id in ids[:length]])
  weights = features["masked_lm_weights"].float_list.value
  positions = features["masked_lm_positions"].int64_list.value
  labels = features["masked_lm_ids"].int64_list.value
  for position, label, weight in zip(positions, labels, weights):
    if weight > 0:
      original = (tokenizer.convert_ids_to_tokens([label])[0] if tokenizer
                  else str(label))
      names[position] = f"[{names[position]}={original}]"
  segments = features["segment_ids"].int64_list.value[:length]
  first = [name for name, segment in zip(names, segments) if segment == 0]
  second = [name for name, segment in zip(names, segments) if segment == 1]
  label = features[pretraining_features.NEXT_SENTENCE_LABELS].int64_list.value
  return [f"segment A: {' '.join(first)}",
          f"segment B: {' '.join(second)}",
          f"next_sentence_label: {label[0]} "
          f"({'random' if label[0] else 'IsNext'}), "
          f"{sum(weight > 0 for weight in weights)} masked, "
          f"{length} of {len(ids)} positions used"]


def inspect(path, tokenizer):
  for index, record in enumerate(tf.data.TFRecordDataset(path)):
    if index >= FLAGS.max_examples:
      break
    example = tf.train.Example.FromString(record.numpy())
    seq_length, predictions = pretraining_features.example_lengths(example)
    print(f"{path} record {index} (max_seq_length={seq_length}, "
          f"max_predictions_per_seq={predictions}):")
    for line in describe(example, tokenizer):
      print(f"  {line}")
  if FLAGS.max_seq_length is not None or (
      FLAGS.max_predictions_per_seq is not None):
    first = next(iter(tf.data.TFRecordDataset(path).take(1)), None)
    if first is None:
      raise ValueError(f"{path}: no records")
    written = pretraining_features.example_lengths(
        tf.train.Example.FromString(first.numpy()))
    count = pretraining_features.check_file_lengths(
        path, FLAGS.max_seq_length or written[0],
        FLAGS.max_predictions_per_seq or written[1])
    print(f"{path}: all {count} records match max_seq_length="
          f"{FLAGS.max_seq_length or written[0]}, max_predictions_per_seq="
          f"{FLAGS.max_predictions_per_seq or written[1]}")


def main(_):
  tokenizer = (tokenization.FullTokenizer(FLAGS.vocab_file)
               if FLAGS.vocab_file else None)
  paths = [path for pattern in FLAGS.input_file.split(",")
           for path in tf.io.gfile.glob(pattern)]
  if not paths:
    sys.exit(f"inspect_tfrecords: --input_file={FLAGS.input_file} matches "
             f"no file")
  try:
    for path in paths:
      inspect(path, tokenizer)
  except (ValueError, tf.errors.DataLossError) as error:
    sys.exit(f"inspect_tfrecords: {error}")


if __name__ == "__main__":
  flags.mark_flag_as_required("input_file")
  app.run(main)
