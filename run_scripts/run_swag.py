"""Fine-tunes BERT on SWAG (multiple choice), evaluates, predicts, exports:
the paper's §4.4.

    python run_scripts/run_swag.py --data_dir=$SWAG_DIR \\
      --vocab_file=$BERT_BASE_DIR/vocab.txt \\
      --bert_config_file=$BERT_BASE_DIR/bert_config.json \\
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt \\
      --do_train=true --do_eval=true --do_predict=true \\
      --max_seq_length=128 --train_batch_size=16 --learning_rate=2e-5 \\
      --num_train_epochs=3.0 --output_dir=/tmp/swag_output/

--data_dir holds train.csv, val.csv and test.csv as the swagaf
distribution ships them ("regular" layout). Batch sizes count examples,
each of four sequences (the paper's batch of 16 is 64 sequences). Writes
eval_results.txt (eval_accuracy, eval_loss, global_step, loss),
test_results.tsv (the four ending probabilities per test row, in order),
test_predictions.tsv (each test row's index and predicted ending),
checkpoints in the release format (the head as output_weights [1, hidden]
and output_bias [1]; resumable) and, with --export_dir, a TF Serving
SavedModel. The shared flags: see fine_tuning_flags.py and
training_flags.py.
"""

from absl import flags

import program  # first: quiets TensorFlow's start-up
import fine_tuning_flags

flags.DEFINE_string(
    "data_dir", None,
    "The directory of the swagaf files train.csv, val.csv (dev) and "
    "test.csv.")
# --help lists the shared fine-tuning flags with this script's own.
flags.adopt_module_key_flags(fine_tuning_flags)
FLAGS = flags.FLAGS


def main(_):
  from bert_tf.tasks.swag.task import SwagTask
  fine_tuning_flags.run(SwagTask(FLAGS.data_dir))


if __name__ == "__main__":
  program.run(main, required_flags=["data_dir",
                                    *fine_tuning_flags.REQUIRED_FLAGS])
