"""Flags every fine-tuning script shares, and running a task with them.

A fine-tuning script defines its own flags (where its data is, which task),
builds its bert_tf.tasks.FineTuningTask and calls run(task); the runner
does the rest. The flags keep the original's names, defaults and help; a
script whose original had other defaults (run_squad's max_seq_length of
384) sets them with FLAGS.set_default.
"""

from absl import flags

import export_flags
import tokenizer_flags
import model_flags
import training_flags

flags.DEFINE_integer(
    "max_seq_length", 128,
    "The maximum total input sequence length after WordPiece tokenization. "
    "Sequences longer than this will be truncated, and sequences shorter "
    "than this will be padded.")
flags.DEFINE_bool(
    "do_predict", False,
    "Whether to run the model in inference mode on the test set.")
flags.DEFINE_integer("predict_batch_size", 8, "Total batch size for predict.")
flags.DEFINE_float("num_train_epochs", 3.0,
                   "Total number of training epochs to perform.")
flags.DEFINE_float(
    "warmup_proportion", 0.1,
    "Proportion of training to perform linear learning rate warmup for. "
    "E.g., 0.1 = 10% of training.")
flags.DEFINE_bool(
    "bucket_by_length", False,
    "Train on batches of features of similar length, each run at its own "
    "length: faster, but batches are no longer mixed in length, so a run "
    "differs from the original's. Evaluation and prediction always run so, "
    "with the same outputs; run_squad's, whose n-best lists rank padding "
    "positions as the original's do, only with this flag.")
flags.DEFINE_integer(
    "lora_rank", None,
    "Train LoRA adapters of this rank on every layer's query and value "
    "projections and the task's head, the rest of the encoder frozen. "
    "Checkpoints and exports hold the adapters merged into the weights (a "
    "resumed run goes on from those with new adapters).")
# --help lists the tokenizer and training flags with the fine-tuning ones.
flags.adopt_module_key_flags(tokenizer_flags)
flags.adopt_module_key_flags(training_flags)
flags.adopt_module_key_flags(export_flags)
FLAGS = flags.FLAGS

# The flags every fine-tuning script requires, next to its own.
# (--init_checkpoint naming a model directory stands for --bert_config_file,
# --vocab_file and --do_lower_case.)
REQUIRED_FLAGS = ("output_dir",)


def run(task):
  """Runs `task` as the flags say (bert_tf.tasks.runner.run_fine_tuning)."""
  from bert_tf.tasks.runner import FineTuningOptions, run_fine_tuning
  options = FineTuningOptions(
      **training_flags.run_options(), vocab_file=FLAGS.vocab_file,
      do_lower_case=tokenizer_flags.do_lower_case(),
      do_predict=FLAGS.do_predict,
      predict_batch_size=FLAGS.predict_batch_size,
      num_train_epochs=FLAGS.num_train_epochs,
      warmup_proportion=FLAGS.warmup_proportion,
      bucket_by_length=FLAGS.bucket_by_length, export_dir=FLAGS.export_dir,
      export_text=FLAGS.export_signatures == "all",
      lora_rank=FLAGS.lora_rank)
  return run_fine_tuning(task, options, model_flags.strategy())
