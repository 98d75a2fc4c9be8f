"""Fine-tunes BERT on CoNLL-2003 NER (or trains a BiLSTM on its frozen
features), evaluates, predicts, exports: the paper's §5.3.

    python run_scripts/run_ner.py --data_dir=$CONLL_DIR \\
      --vocab_file=$BERT_BASE_DIR/vocab.txt \\
      --bert_config_file=$BERT_BASE_DIR/bert_config.json \\
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt --do_lower_case=false \\
      --do_train=true --do_eval=true --do_predict=true \\
      --max_seq_length=128 --train_batch_size=32 --learning_rate=5e-5 \\
      --num_train_epochs=3.0 --output_dir=/tmp/ner_output/

--data_dir holds eng.train, eng.testa and eng.testb (train, dev, test) as
the CoNLL-2003 distribution names them. Writes eval_results.txt (dev) and
test_results.txt (test): entity precision, recall and F1 as conlleval counts
them, overall and per type, eval_loss and global_step; dev_predictions.txt
and test_predictions.txt in conlleval's input format; checkpoints in the
release format (resumable); with --export_dir a TF Serving SavedModel
(per-position tag probabilities, labels in bert_tf.tasks.ner.examples.LABELS order).
The shared flags: see fine_tuning_flags.py and training_flags.py.
"""

from absl import flags

import program  # first: quiets TensorFlow's start-up
import fine_tuning_flags

# bert_tf.layers.layer_combination.FEATURE_CHOICES, named here so that the
# flags parse before TensorFlow is imported.
FEATURE_CHOICES = ("embeddings", "second_to_last_hidden", "last_hidden",
                   "weighted_sum_last_four", "concat_last_four",
                   "weighted_sum_all")

flags.DEFINE_string(
    "data_dir", None,
    "The directory of the CoNLL-2003 files eng.train, eng.testa (dev) and "
    "eng.testb (test).")
flags.DEFINE_bool(
    "document_context", True,
    "Fill each sequence with the sentence's neighbours from its document "
    "(the paper's maximal document context); only the sentence's own words "
    "are predicted. --nodocument_context: the sentence alone.")
flags.DEFINE_enum(
    "feature_based", None, list(FEATURE_CHOICES),
    "Feature-based instead of fine-tuned (the paper's Table 7): the encoder "
    "frozen, these of its layers fed to a two-layer BiLSTM and a classifier.")
flags.DEFINE_integer(
    "lstm_units", 768,
    "With --feature_based: the BiLSTM's size per direction (the paper's "
    "768).")
# --help lists the shared fine-tuning flags with this script's own.
flags.adopt_module_key_flags(fine_tuning_flags)
FLAGS = flags.FLAGS


def main(_):
  if FLAGS["lstm_units"].present and not FLAGS.feature_based:
    raise ValueError("--lstm_units is the feature-based BiLSTM's size: give "
                     "--feature_based too, or leave --lstm_units out")
  if FLAGS.feature_based and FLAGS.lora_rank is not None:
    raise ValueError("--lora_rank: --feature_based reads features from a "
                     "frozen encoder, where adapters would not train; leave "
                     "one of them out")
  from bert_tf.tasks.ner.task import NerTask
  fine_tuning_flags.run(NerTask(FLAGS.data_dir, FLAGS.document_context,
                                FLAGS.feature_based, FLAGS.lstm_units))


if __name__ == "__main__":
  program.run(main, required_flags=["data_dir",
                                    *fine_tuning_flags.REQUIRED_FLAGS])
