"""Creates masked-LM / next-sentence TFRecords from raw text.

The original google-research/bert create_pretraining_data.py, same flags and
defaults, same records for the same seed:

    python run_scripts/create_pretraining_data.py \\
      --input_file=corpus.txt --output_file=out.tfrecord \\
      --vocab_file=vocab.txt --do_lower_case=True --max_seq_length=128 \\
      --max_predictions_per_seq=20 --masked_lm_prob=0.15 --random_seed=12345 \\
      --dupe_factor=5
"""

import random
import sys
import time

import tensorflow as tf
from absl import app, flags, logging

from bert_tf import tokenization
from bert_tf.data import pretraining_features
from bert_tf.data.documents import read_documents
from bert_tf.data.pretraining_instances import (InstanceOptions, Vocabulary,
                                                create_training_instances)
from bert_tf.data.tfrecord_writer import RoundRobinWriter

flags.DEFINE_string("input_file", None,
                    "Input raw text file (or comma-separated list of files).")
flags.DEFINE_string(
    "output_file", None,
    "Output TF example file (or comma-separated list of files).")
flags.DEFINE_string("vocab_file", None,
                    "The vocabulary file that the BERT model was trained on.")
flags.DEFINE_bool(
    "do_lower_case", True,
    "Whether to lower case the input text. Should be True for uncased "
    "models and False for cased models.")
flags.DEFINE_bool(
    "do_whole_word_mask", False,
    "Whether to use whole word masking rather than per-WordPiece masking.")
flags.DEFINE_integer("max_seq_length", 128, "Maximum sequence length.")
flags.DEFINE_integer("max_predictions_per_seq", 20,
                     "Maximum number of masked LM predictions per sequence.")
flags.DEFINE_integer("random_seed", 12345, "Random seed for data generation.")
flags.DEFINE_integer(
    "dupe_factor", 10,
    "Number of times to duplicate the input data (with different masks).")
flags.DEFINE_float("masked_lm_prob", 0.15, "Masked LM probability.")
flags.DEFINE_float(
    "short_seq_prob", 0.1,
    "Probability of creating sequences which are shorter than the "
    "maximum length.")
FLAGS = flags.FLAGS

# How many of the first instances are logged in full, as the original does.
_LOGGED_EXAMPLES = 20


def input_files_from_flag(patterns):
  """Expands the comma-separated globs; each must match a non-empty file."""
  files = []
  for pattern in patterns.split(","):
    matched = tf.io.gfile.glob(pattern)
    if not matched:
      raise ValueError(f"--input_file: {pattern} matches no file")
    for path in matched:
      if tf.io.gfile.stat(path).length == 0:
        raise ValueError(f"--input_file: {path} is empty")
    files.extend(matched)
  return files


def validate_flags():
  if FLAGS.max_seq_length < 5:
    raise ValueError(f"--max_seq_length={FLAGS.max_seq_length}: must be at "
                     f"least 5 ([CLS] a [SEP] b [SEP])")
  if not 0 < FLAGS.max_predictions_per_seq <= FLAGS.max_seq_length:
    raise ValueError(
        f"--max_predictions_per_seq={FLAGS.max_predictions_per_seq}: must be "
        f"in [1, --max_seq_length={FLAGS.max_seq_length}]")
  if not 0 < FLAGS.masked_lm_prob <= 1:
    raise ValueError(f"--masked_lm_prob={FLAGS.masked_lm_prob}: must be in "
                     f"(0, 1]")
  if not 0 <= FLAGS.short_seq_prob <= 1:
    raise ValueError(f"--short_seq_prob={FLAGS.short_seq_prob}: must be in "
                     f"[0, 1]")
  if FLAGS.dupe_factor < 1:
    raise ValueError(f"--dupe_factor={FLAGS.dupe_factor}: must be at least 1")


def load_tokenizer():
  if not tf.io.gfile.exists(FLAGS.vocab_file):
    raise ValueError(f"--vocab_file: {FLAGS.vocab_file} does not exist")
  tokenizer = tokenization.FullTokenizer(FLAGS.vocab_file,
                                         FLAGS.do_lower_case)
  missing = [token for token in ("[CLS]", "[SEP]", "[MASK]", "[UNK]")
             if token not in tokenizer.vocab]
  if missing:
    raise ValueError(f"--vocab_file: {FLAGS.vocab_file} lacks {missing}")
  return tokenizer


def log_example(instance, tokenizer, example):
  logging.info("*** Example ***")
  logging.info("tokens: %s", " ".join(
      tokenizer.convert_ids_to_tokens(instance.input_ids)))
  for name, feature in example.features.feature.items():
    values = feature.int64_list.value or feature.float_list.value
    logging.info("%s: %s", name, " ".join(str(value) for value in values))


def main(_):
  try:
    validate_flags()
    tokenizer = load_tokenizer()
    input_files = input_files_from_flag(FLAGS.input_file)
  except ValueError as error:
    sys.exit(f"create_pretraining_data: {error}")
  logging.info("*** Reading from input files ***")
  for input_file in input_files:
    logging.info("  %s", input_file)

  documents = read_documents(input_files, tokenizer)
  if not documents:
    sys.exit(f"create_pretraining_data: no text in {input_files}")
  options = InstanceOptions(
      max_seq_length=FLAGS.max_seq_length,
      max_predictions_per_seq=FLAGS.max_predictions_per_seq,
      masked_lm_prob=FLAGS.masked_lm_prob,
      short_seq_prob=FLAGS.short_seq_prob,
      dupe_factor=FLAGS.dupe_factor,
      do_whole_word_mask=FLAGS.do_whole_word_mask)
  instances = create_training_instances(
      documents, Vocabulary(tokenizer.vocab), options,
      random.Random(FLAGS.random_seed))

  output_files = FLAGS.output_file.split(",")
  logging.info("*** Writing to output files ***")
  for output_file in output_files:
    logging.info("  %s", output_file)
  start = time.time()
  with RoundRobinWriter(output_files) as writer:
    for index, instance in enumerate(instances):
      example = pretraining_features.instance_to_example(
          instance, FLAGS.max_seq_length, FLAGS.max_predictions_per_seq)
      writer.write(example)
      if index < _LOGGED_EXAMPLES:
        log_example(instance, tokenizer, example)
    writer.commit()
  logging.info("Wrote %d total instances in %.1f s", writer.written,
               time.time() - start)


if __name__ == "__main__":
  flags.mark_flag_as_required("input_file")
  flags.mark_flag_as_required("output_file")
  flags.mark_flag_as_required("vocab_file")
  app.run(main)
