"""Fine-tunes BERT on SQuAD v1.1 or v2.0, predicts, scores, exports.

The original google-research/bert run_squad.py, same flags and defaults,
on tf.distribute:

    python run_scripts/run_squad.py --vocab_file=$BERT_BASE_DIR/vocab.txt \\
      --bert_config_file=$BERT_BASE_DIR/bert_config.json \\
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt \\
      --do_train=true --train_file=$SQUAD_DIR/train-v1.1.json \\
      --do_predict=true --predict_file=$SQUAD_DIR/dev-v1.1.json \\
      --train_batch_size=32 --learning_rate=5e-5 --num_train_epochs=3.0 \\
      --max_seq_length=384 --doc_stride=128 --output_dir=/tmp/squad_base/

Writes predictions.json and nbest_predictions.json (and null_odds.json with
--version_2_with_negative) as the original, train.tf_record and
eval.tf_record (the features), checkpoints in the release format; when the
predict_file has answers (a dev set), eval_results.txt with the official
evaluate-v1.1.py / evaluate-v2.0.py numbers and, for v2.0, the best null
threshold; with --export_dir a TF Serving SavedModel, whose serve_text
answers contexts of up to --max_serving_context_length characters. The
shared flags: see fine_tuning_flags.py and training_flags.py.
"""

from absl import flags

import program  # first: quiets TensorFlow's start-up
import fine_tuning_flags
from bert_tf.text.squad.answer_options import AnswerOptions
from bert_tf.text.squad.features import check_lengths
from bert_tf.training import option_checks

# bert_tf.tasks.squad.serving.MAX_SERVING_CONTEXT_LENGTH, named here so that
# the flags parse before TensorFlow is imported.
MAX_SERVING_CONTEXT_LENGTH = 10_000

flags.DEFINE_string("train_file", None,
                    "SQuAD json for training. E.g., train-v1.1.json")
flags.DEFINE_string(
    "predict_file", None,
    "SQuAD json for predictions. E.g., dev-v1.1.json or test-v1.1.json")
flags.DEFINE_integer(
    "doc_stride", 128,
    "When splitting up a long document into chunks, how much stride to "
    "take between chunks.")
flags.DEFINE_integer(
    "max_query_length", 64,
    "The maximum number of tokens for the question. Questions longer than "
    "this will be truncated to this length.")
flags.DEFINE_integer(
    "n_best_size", 20,
    "The total number of n-best predictions to generate in the "
    "nbest_predictions.json output file.")
flags.DEFINE_integer(
    "max_answer_length", 30,
    "The maximum length of an answer that can be generated. This is needed "
    "because the start and end predictions are not conditioned on one "
    "another.")
flags.DEFINE_bool(
    "verbose_logging", False,
    "If true, all of the warnings related to data processing will be "
    "printed. A number of warnings are expected for a normal SQuAD "
    "evaluation.")
flags.DEFINE_bool(
    "version_2_with_negative", False,
    "If true, the SQuAD examples contain some that do not have an answer.")
flags.DEFINE_float(
    "null_score_diff_threshold", 0.0,
    "If null_score - best_non_null is greater than the threshold predict "
    "null. A dev run's eval_results.txt gives the best one "
    "(best_f1_thresh).")
flags.DEFINE_integer(
    "max_serving_context_length", MAX_SERVING_CONTEXT_LENGTH,
    "The most characters of context the --export_dir SavedModel's "
    "serve_text answers; a longer context is refused, so that one request "
    "cannot hold a server for long. At least 1.")
# --help lists the shared fine-tuning flags with this script's own.
flags.adopt_module_key_flags(fine_tuning_flags)
FLAGS = flags.FLAGS
FLAGS.set_default("max_seq_length", 384)


def main(_):
  if FLAGS.do_eval:
    raise ValueError("run_squad has no --do_eval (as the original): "
                     "--do_predict on a --predict_file with answers also "
                     "scores it (eval_results.txt)")
  option_checks.check_at_least_one(
      FLAGS, ("n_best_size", "max_answer_length",
              "max_serving_context_length"))
  # Before any file is read, as the original's validate_flags_or_throw.
  check_lengths(FLAGS.max_seq_length, FLAGS.max_query_length,
                FLAGS.doc_stride)
  # pylint: disable-next=g-import-not-at-top
  from bert_tf.tasks.squad.task import SquadTask
  fine_tuning_flags.run(SquadTask(
      FLAGS.train_file, FLAGS.predict_file, FLAGS.doc_stride,
      FLAGS.max_query_length, AnswerOptions(
          n_best_size=FLAGS.n_best_size,
          max_answer_length=FLAGS.max_answer_length,
          version_2_with_negative=FLAGS.version_2_with_negative,
          null_score_diff_threshold=FLAGS.null_score_diff_threshold,
          verbose_logging=FLAGS.verbose_logging),
      FLAGS.max_serving_context_length))


if __name__ == "__main__":
  program.run(main, required_flags=fine_tuning_flags.REQUIRED_FLAGS)
