"""Flags every training script shares: the original's common flags
(output, batch sizes, loop), plus model_flags' (model, checkpoint, TPU,
distribution, precision) and the modern training options. A script defines
its own flags, imports this module, and builds its options dataclass with
`run_options()` and its strategy with `model_flags.strategy()`.
"""

from absl import flags

import model_flags
from bert_tf.training import option_checks

# bert_tf.optimization.optimizers.OPTIMIZERS, named here so that the flags
# parse before TensorFlow is imported.
OPTIMIZERS = ("adamw", "lamb")

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


def run_options():
  """The options every training run takes from these flags, as keyword
  arguments of its options dataclass (FineTuningOptions,
  PretrainingOptions)."""
  return dict(
      bert_config_file=FLAGS.bert_config_file, output_dir=FLAGS.output_dir,
      init_checkpoint=FLAGS.init_checkpoint, do_train=FLAGS.do_train,
      do_eval=FLAGS.do_eval, train_batch_size=FLAGS.train_batch_size,
      eval_batch_size=FLAGS.eval_batch_size,
      max_seq_length=FLAGS.max_seq_length,
      learning_rate=FLAGS.learning_rate, optimizer=FLAGS.optimizer,
      seed=FLAGS.seed, training=_training_options())


def _training_options():
  """TrainingOptions from the flags (the runner sets num_train_steps).

  Raises:
    ValueError: a flag out of range, named.
  """
  option_checks.check_at_least_one(FLAGS, (
      "save_checkpoints_steps", "iterations_per_loop",
      "gradient_accumulation_steps", "keep_checkpoint_max"))
  # 0 keeps the weights as loaded.
  option_checks.check_not_negative(FLAGS, ("learning_rate",))
  from bert_tf.training.trainer import TrainingOptions
  return TrainingOptions(
      num_train_steps=0,
      save_checkpoints_steps=FLAGS.save_checkpoints_steps,
      iterations_per_loop=FLAGS.iterations_per_loop,
      gradient_accumulation_steps=FLAGS.gradient_accumulation_steps,
      keep_checkpoint_max=FLAGS.keep_checkpoint_max,
      use_xla=FLAGS.use_xla,
      dtype=FLAGS.dtype)
