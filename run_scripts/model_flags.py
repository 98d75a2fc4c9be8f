"""Flags of every script that runs a BERT model: which model and checkpoint
(the original's --bert_config_file, --init_checkpoint), where it runs (the
original's TPU flags, and tf.distribute) and in which precision. Training
scripts get them through training_flags; extract_features, which only
predicts, adopts this module alone.
"""

from absl import flags, logging

# bert_tf.training.distribution.STRATEGIES and precision.POLICIES, named
# here so that the flags parse before TensorFlow is imported.
STRATEGIES = ("one_device", "mirrored", "multi_worker_mirrored", "tpu")
DTYPES = ("float32", "bfloat16", "float16")

# The original release's flags, the same in each of its scripts.
flags.DEFINE_string(
    "bert_config_file", None,
    "The config json file corresponding to the pre-trained BERT model. "
    "This specifies the model architecture. Default: the model directory's, "
    "where --init_checkpoint names one.")
flags.DEFINE_string(
    "init_checkpoint", None,
    "Initial checkpoint (usually from a pre-trained BERT model): a prefix, "
    "or a model directory (a release, a Hugging Face folder, a run's "
    "--output_dir), which also gives --bert_config_file, --vocab_file and "
    "--do_lower_case.")
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
flags.DEFINE_enum("distribution_strategy", "one_device", list(STRATEGIES),
                  "one_device: one GPU, else the CPU. mirrored: the local "
                  "GPUs. multi_worker_mirrored: the workers in TF_CONFIG. "
                  "tpu: see --tpu.")
flags.DEFINE_integer("num_gpus", None,
                     "With mirrored: how many local GPUs (default: all).")
flags.DEFINE_bool("use_xla", False,
                  "Compile each step's forward (and backward) pass with XLA.")
flags.DEFINE_enum("dtype", "float32", list(DTYPES),
                  "Compute dtype. bfloat16 and float16 are mixed precision "
                  "(float32 variables and checkpoints); float16 uses dynamic "
                  "loss scaling.")
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
  from bert_tf.training import distribution
  tpu = tpu_address()
  result = distribution.create_strategy(
      FLAGS.distribution_strategy, FLAGS.num_gpus, tpu, FLAGS.tpu_zone,
      FLAGS.gcp_project)
  if tpu and FLAGS.use_tpu and \
      result.num_replicas_in_sync != FLAGS.num_tpu_cores:
    logging.warning("--num_tpu_cores=%d: the TPU has %d cores; using all",
                    FLAGS.num_tpu_cores, result.num_replicas_in_sync)
  return result
