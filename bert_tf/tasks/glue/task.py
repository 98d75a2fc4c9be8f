"""GLUE and XNLI as fine-tuning tasks: run_classifier's task.

Examples come from the files the GLUE download script and XNLI ship
(examples.py describes each task as data); the model is the original's
BertClassifier; eval_results.txt holds the original's keys and the task's
GLUE metric; test_results.tsv the class probabilities (the score for STS-B)
and the GLUE submission file the predicted labels. The export answers raw
text with probabilities and label names.
"""

from bert_tf.checkpoints.names import labels_fields
from bert_tf.models.classifier import BertClassifier
from bert_tf.objectives.classification import (ClassificationObjective,
                                               RegressionObjective)
from bert_tf.tasks.classification import write_probabilities
from bert_tf.tasks.glue import examples, features
from bert_tf.tasks.glue.metrics import glue_metrics
from bert_tf.tasks.glue.serving import classifier_serving
from bert_tf.tasks.task import FineTuningTask


class GlueTask(FineTuningTask):
  """A GLUE or XNLI task read from data_dir.

  Args:
    task: an examples.Task (examples.get_task(name)).
    data_dir: the directory of its files, as the original's --data_dir.
    language: for XNLI's dev and test files, the language kept.
  """

  name = "glue"
  exports = True

  def __init__(self, task, data_dir, language="zh"):
    self.task = task
    self.data_dir = data_dir
    self.language = language
    self.eval_splits = tuple(task.dev_splits)
    self.predict_splits = tuple(task.test_splits)
    self._objective = (RegressionObjective() if task.is_regression
                       else ClassificationObjective())

  def input_files(self, split):
    return [("--data_dir",
             examples.split_path(self.task, self.data_dir, split))]

  def read_examples(self, split):
    return examples.read_examples(self.task, self.data_dir, split,
                                  self.language)

  def convert_examples(self, split, split_examples, tokenizer,
                       max_seq_length):
    return features.convert_examples(split_examples, self.task, tokenizer,
                                     max_seq_length)

  def build_model(self, config):
    return BertClassifier(config, self.task.num_labels)

  def model_flags(self):
    return {"task_name": self.task.name}

  def labels_fields(self):
    if self.task.is_regression:  # transformers' names for STS-B's head
      return labels_fields(["LABEL_0"], "regression")
    return labels_fields(list(self.task.labels))

  @property
  def objective(self):
    return self._objective

  def evaluate(self, split, data, predictions, batch_size):
    return glue_metrics(self.task, predictions, data.features["label_ids"],
                        batch_size)

  def eval_results_file(self, split):
    return f"eval_results{_suffix(split)}.txt"

  def prediction_files(self, split):
    """test_results.tsv and the GLUE submission file (e.g. MRPC.tsv) of a
    test split; none for a dev split (eval_results.txt only)."""
    if split in self.eval_splits:
      return ()
    suffix = _suffix(split)
    return (f"test_results{suffix}.tsv", self.task.submission_files.get(
        split, f"{self.task.name}{suffix}.tsv"))

  def write_predictions(self, split, data, predictions, files):
    """Probabilities per line, as the original (the score for a regressor),
    and `index<TAB>prediction` with label names."""
    results, submission = files
    if self.task.is_regression:
      values = predictions["predictions"][:, None]
      predicted = [f"{value:.3f}" for value in predictions["predictions"]]
    else:
      values = predictions["probabilities"]
      predicted = [self.task.labels[index]
                   for index in values.argmax(axis=-1)]
    write_probabilities(results, values)
    submission.write("index\tprediction\n")
    for example, label in zip(data.examples, predicted):
      submission.write(f"{example.index}\t{label}\n")

  def serving(self, model, tokenizer, max_seq_length):
    return classifier_serving(
        model, tokenizer, max_seq_length, self.task.labels,
        text_pairs=self.task.has_text_pairs)


def _suffix(split):
  """"" for dev/test, "_mismatched" for MNLI's mismatched sets."""
  return split.partition("_")[2] and f"_{split.partition('_')[2]}"
