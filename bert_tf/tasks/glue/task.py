"""GLUE and XNLI as fine-tuning tasks: run_classifier's task.

Examples come from the files the GLUE download script and XNLI ship
(bert_tf.tasks.glue.examples describes each task as data); the model is the original's
BertClassifier; eval_results.txt holds the original's keys and the task's
GLUE metric; test_results.tsv the class probabilities (the score for STS-B)
and the GLUE submission file the predicted labels. The export answers raw
text with probabilities and label names.
"""

import numpy as np
import tensorflow as tf

from bert_tf.tasks.glue import (examples as glue,
                                features as classifier_features)
from bert_tf.tasks.glue.metrics import glue_metrics
from bert_tf.models.classifier import BertClassifier
from bert_tf.tasks.serving import (IdsServing, checked_texts, ids_signatures,
                                  packed_texts)
from bert_tf.tasks.task import FineTuningTask
from bert_tf.training.objectives import ClassificationObjective


class ClassificationTask(FineTuningTask):
  """A glue.Task read from data_dir.

  Args:
    task: a bert_tf.tasks.glue.examples.Task (glue.get_task(name)).
    data_dir: the directory of its files, as the original's --data_dir.
    language: for XNLI's dev and test files, the language kept.
  """

  def __init__(self, task, data_dir, language="zh"):
    self.task = task
    self.data_dir = data_dir
    self.language = language
    self.eval_splits = tuple(task.dev_splits)
    self.predict_splits = tuple(task.test_splits)
    self._objective = ClassificationObjective(task.is_regression)

  def input_files(self, split):
    return [("--data_dir", glue.split_path(self.task, self.data_dir, split))]

  def read_examples(self, split):
    return glue.read_examples(self.task, self.data_dir, split, self.language)

  def convert_examples(self, split, examples, tokenizer, max_seq_length):
    return classifier_features.convert_examples(examples, self.task,
                                                tokenizer, max_seq_length)

  def build_model(self, config):
    return BertClassifier(config, self.task.num_labels)

  @property
  def objective(self):
    return self._objective

  def evaluate(self, split, examples, features, outputs, batch_size):
    return glue_metrics(self.task.name, outputs, features["label_ids"],
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

  def write_predictions(self, split, examples, features, outputs, files):
    """Probabilities per line, as the original (the score for a regressor),
    and `index<TAB>prediction` with label names."""
    results, submission = files
    if self.task.is_regression:
      values = outputs["predictions"][:, None]
      predicted = [f"{value:.3f}" for value in outputs["predictions"]]
    else:
      values = outputs["probabilities"]
      predicted = [self.task.labels[index]
                   for index in values.argmax(axis=-1)]
    write_probabilities(results, values)
    submission.write("index\tprediction\n")
    for example, label in zip(examples, predicted):
      submission.write(f"{example.index}\t{label}\n")

  def serving(self, model, tokenizer, max_seq_length):
    return classifier_serving(
        model, tokenizer, max_seq_length, self.task.labels,
        text_pairs=self.task.has_text_pairs)


def write_probabilities(writer, rows):
  """One line per row, its values tab-separated as the original prints
  them (str of a float32): run_classifier's test_results.tsv."""
  for row in rows:
    writer.write("\t".join(str(np.float32(value)) for value in row) + "\n")


def _suffix(split):
  """"" for dev/test, "_mismatched" for MNLI's mismatched sets."""
  return split.partition("_")[2] and f"_{split.partition('_')[2]}"


class ClassifierServing(IdsServing):
  """A classifier, its in-graph tokenizer and its label names, for export.

  serving_default(input_ids, input_mask, segment_ids: int32 [batch, seq])
      -> probabilities [batch, classes] (predictions [batch] for a
      regressor); ids outside the model's tables are refused
      (serving.checked_ids). Core TensorFlow ops only: stock TF
      Serving runs it.
  serve_text(text_a[, text_b]: string [batch])
      -> the same plus labels (label names; none for a regressor). The text
      is tokenised in the graph exactly as FullTokenizer does and packed as
      training packs it (text_inputs.encode_texts); this uses
      tensorflow-text's ops. The vocabulary travels inside the SavedModel.
  """

  def __init__(self, model, tokenizer, max_seq_length, label_names):
    super().__init__(model, ("predictions",) if model.is_regression
                     else ("probabilities",))
    self.tokenizer = tokenizer
    self.max_seq_length = max_seq_length
    self.label_names = tf.constant(label_names) if label_names else None

  def predict_text(self, text_a, text_b=None):
    outputs = self.predict(packed_texts(self.tokenizer, self.max_seq_length,
                                        text_a, text_b))
    if self.label_names is not None:
      outputs["labels"] = tf.gather(
          self.label_names, tf.argmax(outputs["probabilities"], axis=-1))
    return outputs


def classifier_serving(model, tokenizer, max_seq_length, label_names=None,
                       text_pairs=False):
  """(ClassifierServing, its signatures) for export.write_saved_model.

  Args:
    model: a BertClassifier.
    tokenizer: the InGraphTokenizer of the model's vocabulary; None for
      serving_default alone.
    max_seq_length: the sequence length serve_text packs to.
    label_names: the class names in label order (None for a regressor).
    text_pairs: whether serve_text takes text_b as well as text_a.
  """
  serving = ClassifierServing(model, tokenizer, max_seq_length,
                              list(label_names) if label_names else None)
  signatures = ids_signatures(serving)
  if tokenizer is None:
    return serving, signatures
  text_spec = tf.TensorSpec([None], tf.string)
  if text_pairs:
    @tf.function(input_signature=[text_spec] * 2)
    def serve_text(text_a, text_b):
      return serving.predict_text(**checked_texts(
          {"text_a": text_a, "text_b": text_b}))
  else:
    @tf.function(input_signature=[text_spec])
    def serve_text(text_a):
      return serving.predict_text(**checked_texts({"text_a": text_a}))
  signatures["serve_text"] = serve_text
  return serving, signatures
