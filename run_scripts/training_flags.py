"""Flags every training script shares: the original's common flags
(output, batch sizes, loop), plus model_flags' (model, checkpoint, TPU,
distribution, precision) and the modern training options. A script defines
its own flags, imports this module, and calls `model_flags.strategy()` and
`options(...)`.
"""

from absl import flags

import model_flags
from bert_tf.files import run_files
from bert_tf.training import trainer
from bert_tf.training.optimization import OPTIMIZERS
from bert_tf.training.trainer import TrainingOptions

# The original release's flags, the same in each of its training scripts.
flags.DEFINE_string(
    "output_dir", None,
    "The output directory where the model checkpoints will be written.")
flags.DEFINE_bool("do_train", False, "Whether to run training.")
flags.DEFINE_bool("do_eval", False, "Whether to run eval on the dev set.")
flags.DEFINE_integer("train_batch_size", 32, "Total batch size for training.")
flags.DEFINE_integer("eval_batch_size", 8, "Total batch size for eval.")
flags.DEFINE_float("learning_rate", 5e-5, "The initial learning rate for Adam.")
flags.DEFINE_integer("save_checkpoints_steps", 1000,
                     "How often to save the model checkpoint.")
flags.DEFINE_integer("iterations_per_loop", 1000,
                     "How many steps to make in each estimator call (here: "
                     "in each tf.function call between host visits).")

# Modern ones.
flags.DEFINE_enum("optimizer", "adamw", sorted(OPTIMIZERS),
                  "adamw: the original's AdamWeightDecay. lamb: LAMB.")
flags.DEFINE_integer(
    "gradient_accumulation_steps", 1,
    "Split each replica's batch into this many micro-batches and sum their "
    "gradients: the same update with less memory.")
flags.DEFINE_integer("keep_checkpoint_max", 5,
                     "How many of the newest checkpoints to keep.")
flags.DEFINE_integer("seed", None,
                     "Seeds initialisation, dropout and input shuffling.")
flags.adopt_module_key_flags(model_flags)
FLAGS = flags.FLAGS


def options(num_train_steps):
  """TrainingOptions from the flags.

  Raises:
    ValueError: a flag out of range, named.
  """
  for name in ("save_checkpoints_steps", "iterations_per_loop",
               "gradient_accumulation_steps", "keep_checkpoint_max"):
    if FLAGS[name].value < 1:
      raise ValueError(f"--{name}={FLAGS[name].value}: must be at least 1")
  if FLAGS.learning_rate < 0:  # 0 keeps the weights as loaded
    raise ValueError(f"--learning_rate={FLAGS.learning_rate}: must not be "
                     f"negative")
  return TrainingOptions(
      num_train_steps=num_train_steps,
      save_checkpoints_steps=FLAGS.save_checkpoints_steps,
      iterations_per_loop=FLAGS.iterations_per_loop,
      gradient_accumulation_steps=FLAGS.gradient_accumulation_steps,
      keep_checkpoint_max=FLAGS.keep_checkpoint_max,
      use_xla=FLAGS.use_xla,
      dtype=FLAGS.dtype)


def create_trainer(strategy, build_model, objective, options,
                   num_warmup_steps):
  """trainer.create_trainer with --output_dir, --learning_rate,
  --optimizer, --seed and --init_checkpoint (--train_batch_size checked with
  --do_train)."""
  return trainer.create_trainer(
      strategy, build_model, objective, FLAGS.output_dir, options,
      FLAGS.learning_rate, num_warmup_steps, FLAGS.optimizer, FLAGS.seed,
      FLAGS.init_checkpoint,
      FLAGS.train_batch_size if FLAGS.do_train else None)


def resolve_init_checkpoint():
  """run_files.resolve_init_checkpoint, stored back into --init_checkpoint
  so that the rest of the run uses that one."""
  FLAGS.init_checkpoint = run_files.resolve_init_checkpoint(
      FLAGS.init_checkpoint)
  return FLAGS.init_checkpoint


def check_outputs(file_names, inputs, output_dirs=()):
  """run_files.check_run_outputs for --output_dir, --bert_config_file and
  --init_checkpoint."""
  run_files.check_run_outputs(FLAGS.output_dir, file_names, inputs,
                              FLAGS.bert_config_file, FLAGS.init_checkpoint,
                              output_dirs)

