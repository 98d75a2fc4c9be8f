"""SWAG multiple choice as the paper fine-tunes it (§4.4): run_swag's task.

Rows come from the swagaf CSV files (examples.py: train.csv, val.csv and
test.csv as train, dev and test), become four `[CLS] sent1 [SEP] sent2
ending [SEP]` sequences each (features.py); the model
scores each ending's pooled output and takes a softmax over the four
(BertMultipleChoice). eval_results.txt holds run_classifier's keys;
test_results.tsv the four probabilities per test row and
test_predictions.tsv each row's index and predicted ending.
"""

import os

from bert_tf.models.multiple_choice import BertMultipleChoice
from bert_tf.objectives.multiple_choice import MultipleChoiceObjective
from bert_tf.tasks.classification import (classification_metrics,
                                          write_probabilities)
from bert_tf.tasks.swag import examples, features
from bert_tf.tasks.swag.serving import swag_serving
from bert_tf.tasks.task import FineTuningTask

# The swagaf distribution's names of the splits.
SPLIT_FILES = {"train": "train.csv", "dev": "val.csv", "test": "test.csv"}


class SwagTask(FineTuningTask):
  """SWAG from data_dir (the swagaf "regular" files)."""

  name = "swag"
  eval_splits = ("dev",)
  predict_splits = ("test",)
  objective = MultipleChoiceObjective()
  exports = True

  def __init__(self, data_dir):
    self.data_dir = data_dir

  def input_files(self, split):
    return [("--data_dir", os.path.join(self.data_dir, SPLIT_FILES[split]))]

  def read_examples(self, split):
    return examples.read_swag(self.input_files(split)[0][1],
                              labelled=split != "test")

  def convert_examples(self, split, split_examples, tokenizer,
                       max_seq_length):
    return features.convert_examples(split_examples, tokenizer,
                                     max_seq_length)

  def build_model(self, config):
    return BertMultipleChoice(config)

  def evaluate(self, split, data, predictions, batch_size):
    return classification_metrics(predictions["probabilities"],
                                  data.features["label_ids"], batch_size)

  def prediction_files(self, split):
    return () if split == "dev" else ("test_results.tsv",
                                      "test_predictions.tsv")

  def write_predictions(self, split, data, predictions, files):
    """The four probabilities per row, as run_classifier's
    test_results.tsv, and `index<TAB>prediction` (the ending's number)."""
    results, choices = files
    probabilities = predictions["probabilities"]
    write_probabilities(results, probabilities)
    choices.write("index\tprediction\n")
    for example, choice in zip(data.examples,
                               probabilities.argmax(axis=-1)):
      choices.write(f"{example.index}\t{choice}\n")

  def serving(self, model, tokenizer, max_seq_length):
    return swag_serving(model, tokenizer, max_seq_length)
