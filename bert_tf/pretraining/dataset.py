"""The pretraining input pipeline, as the original run_pretraining's input_fn.

Training: the file list repeated and shuffled, files read interleaved in
parallel, records shuffled (buffer 100), parsed in parallel, batched with
the remainder dropped, prefetched. Evaluation: the files in order, repeated
(the loop stops after max_eval_steps). shuffle_buffer_size=0 turns both
shuffles off, so that a run can be compared step by step with a reference.
"""

import logging

import tensorflow as tf

from bert_tf.pretraining import features as pretraining_features

logger = logging.getLogger(__name__)

# The original's num_cpu_threads: how many files are read at once.
_CYCLE_LENGTH = 4


def pretraining_dataset(input_files, max_seq_length, max_predictions_per_seq,
                        batch_size, is_training, shuffle_buffer_size=100,
                        seed=None, num_workers=1, vocab_size=None):
  """A tf.data.Dataset of feature dicts (int32 ids, float32 weights).

  The first record of every file is checked at once (check_records): a file
  that is not a TFRecord, or was written for other lengths or a larger
  vocabulary, is refused by name before training starts. A fault further
  into a file stops the pipeline with an error that names no file;
  find_bad_record names it.

  num_workers: how many processes a multi-worker strategy splits the data
    over; by file when there are enough files, else by record.
  vocab_size: the model's; token ids must be below it.

  Raises:
    ValueError: naming the file, the record and the flag to change.
  """
  input_files = list(input_files)
  for path in input_files:
    pretraining_features.check_records(
        path, max_seq_length, max_predictions_per_seq, vocab_size,
        max_records=1)
  spec = pretraining_features.feature_spec(max_seq_length,
                                           max_predictions_per_seq)

  def decode(record):
    features = tf.io.parse_single_example(record, spec)
    # tf.Example stores int64; the model (and TPUs) take int32.
    return {name: tf.cast(value, tf.int32) if value.dtype == tf.int64
            else value for name, value in features.items()}

  if is_training:
    files = tf.data.Dataset.from_tensor_slices(input_files).repeat()
    if shuffle_buffer_size:
      files = files.shuffle(len(input_files), seed=seed)
    records = files.interleave(
        tf.data.TFRecordDataset,
        cycle_length=min(_CYCLE_LENGTH, len(input_files)),
        num_parallel_calls=tf.data.AUTOTUNE,
        deterministic=not shuffle_buffer_size)
    if shuffle_buffer_size:
      records = records.shuffle(shuffle_buffer_size, seed=seed)
  else:
    records = tf.data.TFRecordDataset(input_files).repeat()
  options = tf.data.Options()
  options.experimental_distribute.auto_shard_policy = (
      tf.data.experimental.AutoShardPolicy.FILE
      if len(input_files) >= num_workers
      else tf.data.experimental.AutoShardPolicy.DATA)
  return (records.map(decode, num_parallel_calls=tf.data.AUTOTUNE)
          .batch(batch_size, drop_remainder=True)
          .prefetch(tf.data.AUTOTUNE)
          .with_options(options))


def find_bad_record(input_files, max_seq_length, max_predictions_per_seq,
                    vocab_size=None):
  """Reads every record of every file, as check_records, for the first fault.

  Slow on a big corpus, so run only once the pipeline has failed, to say
  which file and record made it fail.

  Returns:
    The ValueError describing the first bad record, or None if all are good.
  """
  for path in input_files:
    logger.info("Checking every record of %s", path)
    try:
      pretraining_features.check_records(path, max_seq_length,
                                         max_predictions_per_seq, vocab_size)
    except ValueError as error:
      return error
  return None
