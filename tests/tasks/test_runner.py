"""The task layer's seam: a task written here, in a few lines, runs through
the runner end to end: train, evaluate, predict, export, served."""

import os
import random

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.data.text_inputs import encode_texts
from bert_tf.models.classifier import BertClassifier
from bert_tf.objectives.classification import ClassificationObjective
from bert_tf.tasks.glue.serving import classifier_serving
from bert_tf.tasks.runner import FineTuningOptions, run_fine_tuning
from bert_tf.tasks.task import FineTuningTask
from bert_tf.training.trainer import TrainingOptions
from tests.support.helpers import PROJECT_DIR, tiny_config
from tests.support.serving import serve_export

VOCAB = os.path.join(PROJECT_DIR, "vocab", "demo_uncased_vocab.txt")


# --- the whole task ---------------------------------------------------------
class DigitTask(FineTuningTask):
  """Does a text contain a digit? One text per line in <split>.txt."""

  labels = ("no", "yes")
  objective = ClassificationObjective()
  exports = True

  def __init__(self, data_dir):
    self.data_dir = data_dir

  def input_files(self, split):
    return [("--data_dir", os.path.join(self.data_dir, f"{split}.txt"))]

  def read_examples(self, split):
    with open(self.input_files(split)[0][1], encoding="utf-8") as reader:
      return reader.read().splitlines()

  def convert_examples(self, split, texts, tokenizer, max_seq_length):
    features = encode_texts(tokenizer, texts, max_seq_length=max_seq_length)
    features["label_ids"] = np.array(
        [any(char.isdigit() for char in text) for text in texts], np.int32)
    features["is_real_example"] = np.ones(len(texts), np.int32)
    return features

  def build_model(self, config):
    return BertClassifier(config, num_labels=2)

  def evaluate(self, split, data, predictions, batch_size):
    predicted = predictions["probabilities"].argmax(axis=-1)
    return {"eval_accuracy": float(np.mean(
        predicted == data.features["label_ids"]))}

  def prediction_files(self, split):
    return ("digits.tsv",) if split == "test" else ()

  def write_predictions(self, split, data, predictions, files):
    for text, row in zip(data.examples, predictions["probabilities"]):
      files[0].write(f"{text}\t{self.labels[row.argmax()]}\n")

  def serving(self, model, tokenizer, max_seq_length):
    return classifier_serving(model, tokenizer, max_seq_length, self.labels)
# -----------------------------------------------------------------------------


def texts(rng, count):
  with open(VOCAB, encoding="utf-8") as reader:
    words = [line.strip() for line in reader if line.strip().isalpha()][:300]
  for _ in range(count):
    sentence = rng.sample(words, rng.randint(3, 8))
    if rng.random() < 0.5:
      sentence.insert(rng.randrange(len(sentence)), str(rng.randrange(10)))
    yield " ".join(sentence)


def write_config(directory):
  path = directory / "bert_config.json"
  path.write_text(tiny_config(vocab_size=len(open(VOCAB).readlines()))
                  .to_json_string())
  return str(path)


@pytest.fixture(scope="module")
def digit_run(tmp_path_factory):
  tmp_path = tmp_path_factory.mktemp("digits")
  rng = random.Random(0)
  data_dir = tmp_path / "data"
  data_dir.mkdir()
  for split, count in (("train", 640), ("dev", 100), ("test", 20)):
    (data_dir / f"{split}.txt").write_text("\n".join(texts(rng, count)) + "\n")
  options = FineTuningOptions(
      bert_config_file=write_config(tmp_path), vocab_file=VOCAB,
      output_dir=str(tmp_path / "output"), max_seq_length=16, do_train=True,
      do_eval=True, do_predict=True, train_batch_size=32,
      eval_batch_size=64, predict_batch_size=8, learning_rate=1e-3,
      num_train_epochs=5, export_dir=str(tmp_path / "export"), seed=1,
      training=TrainingOptions(num_train_steps=0, iterations_per_loop=20))
  results = run_fine_tuning(DigitTask(str(data_dir)), options,
                            tf.distribute.OneDeviceStrategy("/cpu:0"))
  return tmp_path, results


def test_the_task_trains_and_evaluates(digit_run):
  tmp_path, results = digit_run
  assert results["dev"]["global_step"] == 100
  assert results["dev"]["eval_accuracy"] >= 0.9
  written = (tmp_path / "output" / "eval_results.txt").read_text()
  assert written.splitlines() == [
      f"eval_accuracy = {str(np.float32(results['dev']['eval_accuracy']))}",
      "global_step = 100"]
  assert (tmp_path / "output" / "model.ckpt-100.index").exists()


def test_predictions_and_the_export_agree(digit_run):
  tmp_path, _ = digit_run
  rows = [line.split("\t") for line in
          (tmp_path / "output" / "digits.tsv").read_text().splitlines()]
  assert [text for text, _ in rows] == (
      tmp_path / "data" / "test.txt").read_text().splitlines()
  signatures, outputs = serve_export(
      tmp_path / "export" / "1",
      {"serve_text": {"text_a": [text for text, _ in rows]}}, tmp_path)
  assert signatures == ["serve_text", "serving_default"]
  assert outputs["serve_text"]["labels"] == [label for _, label in rows]


def test_an_output_that_is_an_input_is_refused_first(tmp_path):
  for split in ("train", "test"):
    (tmp_path / f"{split}.txt").write_text("a 1\nb\n")
  task = DigitTask(str(tmp_path))
  task.prediction_files = lambda split: ("../train.txt",)
  with pytest.raises(ValueError, match="train.txt is the same file as "
                     "--data_dir=.*train.txt"):
    run_fine_tuning(task, FineTuningOptions(
        bert_config_file=write_config(tmp_path),
        vocab_file=VOCAB, output_dir=str(tmp_path / "out"), do_train=True,
        do_predict=True, max_seq_length=16), tf.distribute.OneDeviceStrategy("/cpu:0"))
  assert (tmp_path / "train.txt").read_text() == "a 1\nb\n"


def test_export_of_a_task_without_serving_is_refused_first(tmp_path):
  class NoExport(DigitTask):
    exports = False

  (tmp_path / "train.txt").write_text("a 1\nb\n")
  with pytest.raises(ValueError, match="--export_dir: NoExport has no export"):
    run_fine_tuning(NoExport(str(tmp_path)), FineTuningOptions(
        bert_config_file=write_config(tmp_path), vocab_file=VOCAB,
        output_dir=str(tmp_path / "out"), do_train=True, max_seq_length=16,
        export_dir=str(tmp_path / "export")),
        tf.distribute.OneDeviceStrategy("/cpu:0"))
  assert sorted(os.listdir(tmp_path)) == ["bert_config.json", "train.txt"]
