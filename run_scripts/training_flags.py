"""Flags every training script shares: the original's common flags (model,
checkpoints, batch sizes, TPU), and distribution, precision and loop
options. A script defines its own flags, imports this module, and calls
`strategy()` and `options(...)`.
"""

from absl import flags, logging

from bert_tf.training import distribution, precision, run_files, trainer
from bert_tf.training.optimization import OPTIMIZERS
from bert_tf.training.trainer import TrainingOptions

# The original release's flags, the same in each of its training scripts.
flags.DEFINE_string(
    "bert_config_file", None,
    "The config json file corresponding to the pre-trained BERT model. "
    "This specifies the model architecture.")
flags.DEFINE_string(
    "output_dir", None,
    "The output directory where the model checkpoints will be written.")
flags.DEFINE_string(
    "init_checkpoint", None,
    "Initial checkpoint (usually from a pre-trained BERT model).")
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
flags.DEFINE_bool("use_tpu", False, "Whether to use TPU or GPU/CPU.")
flags.DEFINE_string(
    "tpu_name", None,
    "The Cloud TPU to use for training. This should be either the name "
    "used when creating the Cloud TPU, or a grpc://ip.address.of.tpu:8470 "
    "url.")
flags.DEFINE_string(
    "tpu_zone", None,
    "[Optional] GCE zone where the Cloud TPU is located in. If not "
    "specified, we will attempt to automatically detect the GCE project from "
    "metadata.")
flags.DEFINE_string(
    "gcp_project", None,
    "[Optional] Project name for the Cloud TPU-enabled project. If not "
    "specified, we will attempt to automatically detect the GCE project from "
    "metadata.")
flags.DEFINE_string("master", None, "[Optional] TensorFlow master URL.")
flags.DEFINE_integer(
    "num_tpu_cores", 8,
    "Only used if `use_tpu` is True. Total number of TPU cores to use "
    "(TPUStrategy uses every core of the TPU; a different number is "
    "reported).")

# Modern ones.
flags.DEFINE_string(
    "tpu", None,
    "A TPU name, a grpc:// address, or `local` on a TPU VM: trains with "
    "TPUStrategy (the same as --use_tpu --tpu_name=...).")
flags.DEFINE_enum("distribution_strategy", "one_device",
                  list(distribution.STRATEGIES),
                  "one_device: one GPU, else the CPU. mirrored: the local "
                  "GPUs. multi_worker_mirrored: the workers in TF_CONFIG. "
                  "tpu: see --tpu.")
flags.DEFINE_integer("num_gpus", None,
                     "With mirrored: how many local GPUs (default: all).")
flags.DEFINE_bool("use_xla", False,
                  "Compile each step's forward and backward pass with XLA.")
flags.DEFINE_enum("dtype", "float32", list(precision.POLICIES),
                  "Compute dtype. bfloat16 and float16 are mixed precision "
                  "(float32 variables and checkpoints); float16 uses dynamic "
                  "loss scaling.")
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
FLAGS = flags.FLAGS


def tpu_address():
  """--tpu, or the original's --use_tpu with --tpu_name (or --master)."""
  if FLAGS.tpu:
    return FLAGS.tpu
  if FLAGS.use_tpu:
    if not (FLAGS.tpu_name or FLAGS.master):
      raise ValueError("--use_tpu needs --tpu_name (or --master, or --tpu)")
    return FLAGS.tpu_name or FLAGS.master
  return None


def strategy():
  """The tf.distribute strategy the flags ask for.

  Raises:
    ValueError: naming the flag, e.g. when no TPU can be reached.
  """
  tpu = tpu_address()
  result = distribution.create_strategy(
      FLAGS.distribution_strategy, FLAGS.num_gpus, tpu, FLAGS.tpu_zone,
      FLAGS.gcp_project)
  if tpu and FLAGS.use_tpu and \
      result.num_replicas_in_sync != FLAGS.num_tpu_cores:
    logging.warning("--num_tpu_cores=%d: the TPU has %d cores; using all",
                    FLAGS.num_tpu_cores, result.num_replicas_in_sync)
  return result


def options(num_train_steps):
  """TrainingOptions from the flags.

  Raises:
    ValueError: a flag out of range, named.
  """
  for name in ("save_checkpoints_steps", "iterations_per_loop",
               "gradient_accumulation_steps", "keep_checkpoint_max"):
    if FLAGS[name].value < 1:
      raise ValueError(f"--{name}={FLAGS[name].value}: must be at least 1")
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

