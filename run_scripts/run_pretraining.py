"""Pretrains BERT on masked-LM + next-sentence TFRecords.

The original google-research/bert run_pretraining.py, same flags and
defaults, on tf.distribute:

    python run_scripts/run_pretraining.py \\
      --input_file=/tmp/tf_examples.tfrecord --output_dir=/tmp/pretraining \\
      --do_train=True --do_eval=True \\
      --bert_config_file=uncased_L-12_H-768_A-12/bert_config.json \\
      --init_checkpoint=uncased_L-12_H-768_A-12/bert_model.ckpt \\
      --train_batch_size=32 --max_seq_length=128 --max_predictions_per_seq=20 \\
      --num_train_steps=20 --num_warmup_steps=10 --learning_rate=2e-5

Checkpoints are model.ckpt-<step> with the original names and adam_m/adam_v
slots; running the same command again resumes from the newest. With
--do_eval, eval_results.txt holds the original's keys. Distribution and
precision: see model_flags.py and training_flags.py (--tpu,
--distribution_strategy, --dtype, --use_xla, ...).
"""

import os

import program  # first: quiets TensorFlow's start-up
import tensorflow as tf
from absl import flags, logging

import model_flags
import training_flags
from bert_tf.files import file_io
from bert_tf.pretraining.dataset import (find_bad_record,
                                              pretraining_dataset)
from bert_tf.models.pretrainer import BertPretrainer
from bert_tf.files import run_files
from bert_tf.training import distribution
from bert_tf.training.objectives import PretrainingObjective
from bert_tf.training.trainer import write_eval_results

flags.DEFINE_string(
    "input_file", None,
    "Input TF example files (can be a glob or comma separated).")
flags.DEFINE_integer(
    "max_seq_length", 128,
    "The maximum total input sequence length after WordPiece tokenization. "
    "Sequences longer than this will be truncated, and sequences shorter "
    "than this will be padded. Must match data generation.")
flags.DEFINE_integer(
    "max_predictions_per_seq", 20,
    "Maximum number of masked LM predictions per sequence. "
    "Must match data generation.")
flags.DEFINE_integer("num_train_steps", 100000, "Number of training steps.")
flags.DEFINE_integer("num_warmup_steps", 10000, "Number of warmup steps.")
flags.DEFINE_integer("max_eval_steps", 100, "Maximum number of eval steps.")
flags.DEFINE_integer(
    "shuffle_buffer_size", 100,
    "Records shuffled at once (the original's 100). 0: no shuffling at all, "
    "so that a run can be compared step by step with another.")
# --help lists the shared training flags with this script's own.
flags.adopt_module_key_flags(training_flags)
FLAGS = flags.FLAGS


def validate_flags():
  if not FLAGS.do_train and not FLAGS.do_eval:
    raise ValueError("At least one of `do_train` or `do_eval` must be True.")
  for name in ("train_batch_size", "eval_batch_size", "max_eval_steps",
               "num_train_steps", "max_seq_length", "max_predictions_per_seq"):
    if FLAGS[name].value < 1:
      raise ValueError(f"--{name}={FLAGS[name].value}: must be at least 1")
  if FLAGS.num_warmup_steps < 0 or FLAGS.shuffle_buffer_size < 0:
    raise ValueError("--num_warmup_steps and --shuffle_buffer_size must not "
                     "be negative")
  run_files.check_model_to_use(FLAGS.do_train,
                               training_flags.resolve_init_checkpoint(),
                               FLAGS.output_dir, "evaluate")


def dataset(input_files, is_training, strategy, vocab_size):
  return pretraining_dataset(
      input_files, FLAGS.max_seq_length, FLAGS.max_predictions_per_seq,
      FLAGS.train_batch_size if is_training else FLAGS.eval_batch_size,
      is_training=is_training, shuffle_buffer_size=FLAGS.shuffle_buffer_size,
      seed=FLAGS.seed, num_workers=distribution.num_workers(strategy),
      vocab_size=vocab_size)


def on_the_input(work, trainer, input_files, vocab_size):
  """work(); if the input pipeline fails on a bad record (which TensorFlow's
  error does not name), reads the inputs to say which file and record."""
  try:
    return work()
  except (tf.errors.DataLossError, tf.errors.InvalidArgumentError) as error:
    logging.error("The input pipeline failed: %s",
                  error.message.strip().splitlines()[0])
    problem = find_bad_record(input_files, FLAGS.max_seq_length,
                              FLAGS.max_predictions_per_seq, vocab_size)
    if problem is None:
      raise
    kept = trainer.checkpoints.kept
    raise ValueError(
        f"{problem} (the checkpoints in --output_dir are kept, the newest "
        f"{kept[-1]})" if kept else f"{problem} (no checkpoint was written "
        f"yet)") from None


def main(_):
  validate_flags()
  config = run_files.load_bert_config(FLAGS.bert_config_file,
                                      FLAGS.max_seq_length)
  input_files = file_io.input_files(FLAGS.input_file)
  training_flags.check_outputs(
      ["eval_results.txt"], [("--input_file", path) for path in input_files])
  options = training_flags.options(FLAGS.num_train_steps)
  strategy = model_flags.strategy()
  with file_io.owned_directory(FLAGS.output_dir, "--output_dir",
                               owned=distribution.is_chief(strategy)):
    train_and_evaluate(config, input_files, options, strategy)


def train_and_evaluate(config, input_files, options, strategy):
  """main's work, once every input and output is checked and the output
  directory is this run's."""
  train_data = dataset(input_files, True, strategy, config.vocab_size) \
      if FLAGS.do_train else None
  eval_data = dataset(input_files, False, strategy, config.vocab_size) \
      if FLAGS.do_eval else None
  logging.info("*** Input Files ***")
  for input_file in input_files:
    logging.info("  %s", input_file)
  trainer = training_flags.create_trainer(
      strategy, lambda: BertPretrainer(config), PretrainingObjective(),
      options, FLAGS.num_warmup_steps)
  file_io.makedirs(FLAGS.output_dir)
  if FLAGS.do_train:
    on_the_input(lambda: trainer.train(train_data), trainer, input_files,
                 config.vocab_size)
  if FLAGS.do_eval:
    results = on_the_input(
        lambda: trainer.evaluate(eval_data, FLAGS.max_eval_steps), trainer,
        input_files, config.vocab_size)
    if trainer.is_chief:
      write_eval_results(os.path.join(FLAGS.output_dir, "eval_results.txt"),
                         results)


if __name__ == "__main__":
  program.run(main, required_flags=["input_file", "bert_config_file",
                                    "output_dir"])
