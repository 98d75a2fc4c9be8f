"""Fine-tunes BERT on a GLUE task or XNLI, evaluates, predicts, exports.

The original google-research/bert run_classifier.py, same flags and
defaults, on tf.distribute, for every GLUE task (cola, sst-2, mrpc, sts-b,
qqp, mnli, qnli, rte, wnli) and xnli:

    python run_scripts/run_classifier.py --task_name=MRPC --do_train=true \\
      --do_eval=true --do_predict=true --data_dir=glue_data/MRPC \\
      --vocab_file=uncased_L-12_H-768_A-12/vocab.txt \\
      --bert_config_file=uncased_L-12_H-768_A-12/bert_config.json \\
      --init_checkpoint=uncased_L-12_H-768_A-12/bert_model.ckpt \\
      --max_seq_length=128 --train_batch_size=32 --learning_rate=2e-5 \\
      --num_train_epochs=3.0 --output_dir=/tmp/mrpc_output/ \\
      --export_dir=/tmp/mrpc_export

Writes eval_results.txt (eval_accuracy, eval_loss, global_step, loss and
the task's GLUE metric), test_results.tsv (class probabilities per test
example), the GLUE submission file (e.g. MRPC.tsv), checkpoints in the
release format (resumable), and with --export_dir a TF Serving SavedModel.
The shared flags: see fine_tuning_flags.py and training_flags.py.
"""

from absl import flags

import program  # first: quiets TensorFlow's start-up
import fine_tuning_flags
from bert_tf.tasks.glue import examples as glue

flags.DEFINE_string(
    "data_dir", None,
    "The input data dir. Should contain the .tsv files (or other data files) "
    "for the task.")
flags.DEFINE_string("task_name", None, "The name of the task to train.")
flags.DEFINE_string("xnli_language", "zh",
                    "For --task_name=xnli: the language (the original: zh).")
# --help lists the shared fine-tuning flags with this script's own.
flags.adopt_module_key_flags(fine_tuning_flags)
FLAGS = flags.FLAGS


def main(_):
  task = glue.get_task(FLAGS.task_name, FLAGS.xnli_language)
  from bert_tf.tasks.glue.task import GlueTask
  fine_tuning_flags.run(GlueTask(task, FLAGS.data_dir,
                                           FLAGS.xnli_language))


if __name__ == "__main__":
  program.run(main, required_flags=["task_name", "data_dir",
                                    *fine_tuning_flags.REQUIRED_FLAGS])
