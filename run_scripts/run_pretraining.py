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

import program  # first: quiets TensorFlow's start-up
from absl import flags

import model_flags
import training_flags

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
flags.DEFINE_string(
    "vocab_file", None,
    "Not read in training: copied into --output_dir beside the checkpoints, "
    "which makes it a model directory. Default: the model directory's, "
    "where --init_checkpoint names one.")
# --help lists the shared training flags with this script's own.
flags.adopt_module_key_flags(training_flags)
FLAGS = flags.FLAGS


def main(_):
  run_options = training_flags.run_options()  # checked before TensorFlow
  from bert_tf.pretraining.runner import PretrainingOptions, run_pretraining
  run_pretraining(PretrainingOptions(
      **run_options, input_file=FLAGS.input_file,
      vocab_file=FLAGS.vocab_file,
      max_predictions_per_seq=FLAGS.max_predictions_per_seq,
      num_train_steps=FLAGS.num_train_steps,
      num_warmup_steps=FLAGS.num_warmup_steps,
      max_eval_steps=FLAGS.max_eval_steps,
      shuffle_buffer_size=FLAGS.shuffle_buffer_size), model_flags.strategy())


if __name__ == "__main__":
  program.run(main, required_flags=["input_file", "output_dir"])
