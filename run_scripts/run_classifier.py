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
Distribution and precision: see training_flags.py.
"""

import os

import numpy as np
from absl import flags, logging

import program
import training_flags
from bert_tf import export, file_io, tokenization, vocabulary
from bert_tf.data import classifier_features, glue
from bert_tf.evaluation.glue_metrics import glue_metrics
from bert_tf.models.classifier import BertClassifier
from bert_tf.training.objectives import ClassificationObjective
from bert_tf.training.trainer import write_eval_results

flags.DEFINE_string(
    "data_dir", None,
    "The input data dir. Should contain the .tsv files (or other data files) "
    "for the task.")
flags.DEFINE_string("task_name", None, "The name of the task to train.")
flags.DEFINE_string("vocab_file", None,
                    "The vocabulary file that the BERT model was trained on.")
flags.DEFINE_bool(
    "do_lower_case", True,
    "Whether to lower case the input text. Should be True for uncased "
    "models and False for cased models.")
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
flags.DEFINE_string(
    "export_dir", None,
    "Also export a TF Serving SavedModel (signatures serving_default and "
    "serve_text) to a new numbered version folder in this directory.")
flags.DEFINE_string("xnli_language", "zh",
                    "For --task_name=xnli: the language (the original: zh).")
# --help lists the shared training flags with this script's own.
flags.adopt_module_key_flags(training_flags)
FLAGS = flags.FLAGS


def validate_flags():
  if not (FLAGS.do_train or FLAGS.do_eval or FLAGS.do_predict):
    raise ValueError(
        "At least one of `do_train`, `do_eval` or `do_predict' must be True.")
  for name in ("train_batch_size", "eval_batch_size", "predict_batch_size",
               "max_seq_length"):
    if FLAGS[name].value < 1:
      raise ValueError(f"--{name}={FLAGS[name].value}: must be at least 1")
  if FLAGS.num_train_epochs <= 0 or not 0 <= FLAGS.warmup_proportion <= 1:
    raise ValueError("--num_train_epochs must be positive and "
                     "--warmup_proportion in [0, 1]")
  file_io.check_input_file("--vocab_file", FLAGS.vocab_file)
  training_flags.resolve_init_checkpoint()
  tokenization.validate_case_matches_checkpoint(FLAGS.do_lower_case,
                                                FLAGS.init_checkpoint)
  vocabulary.check_do_lower_case(FLAGS.vocab_file, FLAGS.do_lower_case)


def read_splits(task):
  """{split: examples} for every split the flags need, read up front so that
  bad input stops the run before anything is written."""
  wanted = ((["train"] if FLAGS.do_train else [])
            + (task.dev_splits if FLAGS.do_eval else [])
            + (task.test_splits if FLAGS.do_predict else []))
  return {split: glue.read_examples(task, FLAGS.data_dir, split,
                                    FLAGS.xnli_language)
          for split in wanted}


def split_suffix(split):
  """"" for dev/test, "_mismatched" for MNLI's mismatched sets."""
  return split.partition("_")[2] and f"_{split.partition('_')[2]}"


def eval_results_name(split):
  return f"eval_results{split_suffix(split)}.txt"


def prediction_names(task, split):
  """test_results.tsv and the GLUE submission file of a test split."""
  suffix = split_suffix(split)
  return (f"test_results{suffix}.tsv",
          task.submission_files.get(split, f"{task.name}{suffix}.tsv"))


def check_outputs(task, splits):
  """Every file the run will write, checked against its inputs first."""
  names = [eval_results_name(split) for split in task.dev_splits
           if FLAGS.do_eval]
  names += [name for split in task.test_splits if FLAGS.do_predict
            for name in prediction_names(task, split)]
  training_flags.check_outputs(
      names, [("--data_dir", glue.split_path(task, FLAGS.data_dir, split))
              for split in splits] + [("--vocab_file", FLAGS.vocab_file)],
      [("--export_dir", FLAGS.export_dir)] if FLAGS.export_dir else [])


def write_predictions(task, split, examples, outputs):
  """test_results.tsv (probabilities per line, as the original) and the
  GLUE submission file (index, predicted label), replaced together."""
  if task.is_regression:
    values = outputs["predictions"][:, None]
    predicted = [f"{value:.3f}" for value in outputs["predictions"]]
  else:
    values = outputs["probabilities"]
    predicted = [task.labels[index] for index in values.argmax(axis=-1)]
  names = prediction_names(task, split)
  with file_io.AtomicFiles([os.path.join(FLAGS.output_dir, name)
                            for name in names]) as (results, submission):
    for row in values:
      results.write("\t".join(str(np.float32(value)) for value in row) + "\n")
    submission.write("index\tprediction\n")
    for example, label in zip(examples, predicted):
      submission.write(f"{example.index}\t{label}\n")
  logging.info("Wrote %s and %s for %d examples", *names, len(examples))


def train_steps(splits):
  """The original's num_train_steps: examples / batch size * epochs."""
  if not FLAGS.do_train:
    return 0
  steps = int(len(splits["train"]) / FLAGS.train_batch_size
              * FLAGS.num_train_epochs)
  if steps < 1:
    raise ValueError(f"{len(splits['train'])} training examples make no "
                     f"full batch of --train_batch_size="
                     f"{FLAGS.train_batch_size}")
  return steps


def predict(trainer, features, batch_size):
  count = len(features["is_real_example"])
  return trainer.predict(
      classifier_features.classifier_dataset(features, batch_size, False),
      num_batches=-(-count // batch_size))


def main(_):
  validate_flags()
  config = training_flags.load_bert_config(FLAGS.bert_config_file,
                                           FLAGS.max_seq_length)
  vocabulary.check_vocab_fits(FLAGS.vocab_file, config.vocab_size,
                              FLAGS.bert_config_file)
  task = glue.get_task(FLAGS.task_name, FLAGS.xnli_language)
  splits = read_splits(task)
  check_outputs(task, splits)
  num_train_steps = train_steps(splits)
  options = training_flags.options(num_train_steps)
  strategy = training_flags.strategy()
  tokenizer = tokenization.FullTokenizer(FLAGS.vocab_file, FLAGS.do_lower_case)
  features = {}
  for split, examples in splits.items():
    logging.info("***** %s: %d examples *****", split, len(examples))
    features[split] = classifier_features.convert_examples(
        examples, task, tokenizer, FLAGS.max_seq_length)

  num_warmup_steps = int(num_train_steps * FLAGS.warmup_proportion)
  trainer = training_flags.create_trainer(
      strategy, lambda: BertClassifier(config, task.num_labels),
      ClassificationObjective(task.is_regression), options, num_warmup_steps)
  file_io.makedirs(FLAGS.output_dir)
  if FLAGS.do_train:
    logging.info("  Num steps = %d, warmup %d", num_train_steps,
                 num_warmup_steps)
    trainer.train(classifier_features.classifier_dataset(
        features["train"], FLAGS.train_batch_size, True, FLAGS.seed))
  if FLAGS.do_eval:
    for split in task.dev_splits:
      outputs = predict(trainer, features[split], FLAGS.eval_batch_size)
      results = {"global_step": trainer.global_step, **glue_metrics(
          task.name, outputs, features[split]["label_ids"],
          FLAGS.eval_batch_size)}
      if trainer.is_chief:
        write_eval_results(os.path.join(FLAGS.output_dir,
                                        eval_results_name(split)), results)
  if FLAGS.do_predict:
    for split in task.test_splits:
      outputs = predict(trainer, features[split], FLAGS.predict_batch_size)
      if trainer.is_chief:
        write_predictions(task, split, splits[split], outputs)
  if FLAGS.export_dir and trainer.is_chief:
    export.export_classifier(
        trainer.model, FLAGS.export_dir, FLAGS.vocab_file, FLAGS.do_lower_case,
        FLAGS.max_seq_length, task.labels,
        text_pairs=task.has_text_pairs)


if __name__ == "__main__":
  program.run(main, required_flags=["task_name", "data_dir", "vocab_file",
                                    "bert_config_file", "output_dir"])
