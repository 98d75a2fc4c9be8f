"""Fine-tuning and prediction on real GLUE files: bert_tf against Model Garden.

What it measures, for each --tasks GLUE task (MRPC, SST-2 and CoLA from
../shared/data/glue, tokenised as run_classifier tokenises them at
--seq_length 128), with one random BERT of the model flags per stack:

  prediction   examples/sec over the whole dev set of
                 bert_tf          Predictor.predict as the runner calls it:
                                  each batch at its own length
                                  (batching.length_bucketed_batches)
                 bert_tf_fixed    the same at full length (by_length=False)
                 model_garden     Model Garden's BertClassifier on the same
                                  numpy batches at full length, in a
                                  tf.function
               and the largest difference between bert_tf's two outputs.
  training     examples/sec of train-file batches of --batch_size:
                 bert_tf          the runner's Trainer on
                                  batching.training_dataset (fixed length,
                                  as run_classifier trains by default)
                 bert_tf_bucketed the same with --bucket_by_length
                 model_garden     Model Garden's BertClassifier with its
                                  "adamw" on the same fixed-length batches

Every stack is run once untimed (tracing), then the timed passes alternate
between them (benchmarks/pretraining.py's time_alternately). Printed: a
table per part and the ratios of each bert_tf figure to Model Garden's and
to bert_tf's full-length one; --output_json writes them too.

Run from the repository root (a few minutes on 2 CPU cores):

  .venv/bin/python benchmarks/fine_tuning.py [--tasks=MRPC,SST-2,CoLA] \\
      [--num_layers=4 --hidden_size=256 ...] [--output_json=PATH]
"""

import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# pylint: disable=g-import-not-at-top,wrong-import-position
import pretraining  # first: it quiets TensorFlow's and Model Garden's logs
import pretrainer_step
import machine
import keras
import numpy as np
import tensorflow as tf
from official.nlp.modeling import models as mg_models
from bert_tf import tokenization
from bert_tf.data import batching
from bert_tf.data.batching import feature_lengths
from bert_tf.models.classifier import BertClassifier
from bert_tf.models.predictor import Predictor
from bert_tf.objectives.classification import ClassificationObjective
from bert_tf.tasks.glue import examples as glue
from bert_tf.tasks.glue.task import GlueTask
# pylint: enable=g-import-not-at-top,wrong-import-position

PROJECT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED_DIR = os.path.join(os.path.dirname(PROJECT_DIR), "shared")
MODEL_INPUTS = ("input_ids", "input_mask", "segment_ids")


def parse_args():
  parser = pretrainer_step.model_argument_parser(__doc__.split("\n", 1)[0])
  parser.add_argument("--tasks", default="MRPC,SST-2,CoLA")
  parser.add_argument("--glue_dir",
                      default=os.path.join(SHARED_DIR, "data", "glue"))
  parser.add_argument("--vocab_file", default=os.path.join(
      SHARED_DIR, "vocab", "bert-base-uncased-vocab.txt"))
  parser.add_argument("--parts", default="prediction,training")
  parser.add_argument("--rounds", type=int, default=3,
                      help="timed passes (prediction) or loops (training) "
                           "per stack")
  parser.add_argument("--loop_steps", type=int, default=10,
                      help="training steps per timed loop")
  parser.add_argument("--output_json", default=None)
  return parser.parse_args()


def task_features(args, name, split):
  """run_classifier's features of a GLUE task's split."""
  task = GlueTask(glue.get_task(name),
                            os.path.join(args.glue_dir, name))
  tokenizer = tokenization.FullTokenizer(args.vocab_file, True)
  return task.task.num_labels, task.convert_examples(
      split, task.read_examples(split), tokenizer, args.seq_length)


def model_garden_classifier(args, num_labels):
  return mg_models.BertClassifier(
      pretrainer_step.model_garden_encoder(args), num_labels,
      initializer=pretrainer_step.model_garden_initializer())


def measure_prediction(args, name):
  """Dev-set examples/sec of the three prediction paths."""
  num_labels, features = task_features(args, name, "dev")
  strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
  with strategy.scope():
    ours = BertClassifier(pretrainer_step.bert_tf_config(args), num_labels)
  predictor = Predictor(strategy, ours)
  theirs = model_garden_classifier(args, num_labels)
  theirs_logits = tf.function(lambda batch: theirs(
      pretrainer_step.model_garden_inputs(batch), training=False))
  batches = [{name: tf.constant(batch[name]) for name in MODEL_INPUTS}
             for batch in batching.prediction_batches(features,
                                                      args.batch_size)]
  outputs = {}

  def ours_runner(by_length):
    def run():
      outputs[by_length] = predictor.predict(
          features, args.batch_size, by_length)["probabilities"]
      return float(outputs[by_length].sum())
    return run

  def theirs_runner():
    return float(sum(tf.reduce_sum(theirs_logits(batch))
                     for batch in batches))

  seconds = pretraining.time_alternately(
      {"bert_tf": ours_runner(True), "bert_tf_fixed": ours_runner(False),
       "model_garden": theirs_runner}, args.rounds, use_xla=False)
  count = len(features["input_ids"])
  return {"examples": count,
          "mean_length": float(feature_lengths(features).mean()),
          **{stack: count * args.rounds / sum(values)
             for stack, values in seconds.items()},
          "max_abs_difference": float(np.abs(outputs[True]
                                             - outputs[False]).max())}


def measure_training(args, name):
  """Train-file examples/sec of the three training paths."""
  num_labels, features = task_features(args, name, "train")
  objective = ClassificationObjective()
  theirs = model_garden_classifier(args, num_labels)

  def theirs_loss(batch, training):
    logits = theirs(pretrainer_step.model_garden_inputs(batch),
                    training=training)
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=batch["label_ids"], logits=logits))

  with tempfile.TemporaryDirectory() as output_dir:
    runners = {
        f"bert_tf{'_bucketed' if by_length else ''}":
        pretraining.bert_tf_runner(
            args, lambda: BertClassifier(pretrainer_step.bert_tf_config(args),
                                         num_labels), objective,
            batching.training_dataset(features, args.batch_size, seed=0,
                                      by_length=by_length),
            "float32", False, os.path.join(output_dir, str(by_length)))
        for by_length in (False, True)}
    runners["model_garden"] = pretraining.model_garden_loop(
        args, theirs_loss, theirs.trainable_variables,
        iter(batching.training_dataset(features, args.batch_size, seed=0)),
        use_xla=False)
    rates = pretraining.examples_per_sec(args, runners, use_xla=False)
  return {"examples": len(features["input_ids"]),
          "mean_length": float(feature_lengths(features).mean()), **rates}


def print_table(part, rows, stacks):
  print(f"\n{part} examples/sec (ratios: to model_garden, to "
        f"{stacks[1]})")
  print(f"{'task':<7} {'mean len':>8} " + " ".join(
      f"{stack:>16}" for stack in stacks) + f" {'x MG':>6} {'x fixed':>7}")
  for task, row in rows.items():
    print(f"{task:<7} {row['mean_length']:>8.1f} " + " ".join(
        f"{row[stack]:>16.1f}" for stack in stacks)
          + f" {row[stacks[0]] / row['model_garden']:>6.2f}"
          f" {row[stacks[0]] / row[stacks[1]]:>7.2f}")


def main():
  args = parse_args()
  print(machine.described_in_child(), flush=True)
  keras.utils.set_random_seed(pretrainer_step.SEED)
  tasks = args.tasks.split(",")
  parts = args.parts.split(",")
  results = {}
  if "prediction" in parts:
    results["prediction"] = {}
    for name in tasks:
      print(f"prediction {name}", flush=True)
      results["prediction"][name] = measure_prediction(args, name)
  if "training" in parts:
    results["training"] = {}
    for name in tasks:
      print(f"training {name}", flush=True)
      results["training"][name] = measure_training(args, name)
  print(f"\nlayers={args.num_layers} hidden={args.hidden_size} "
        f"seq={args.seq_length} batch={args.batch_size} on "
        f"{os.cpu_count()} CPU cores")
  if "prediction" in results:
    print_table("prediction", results["prediction"],
                ["bert_tf", "bert_tf_fixed", "model_garden"])
    print("max |bert_tf - bert_tf_fixed| probability: " + ", ".join(
        f"{task} {row['max_abs_difference']:.1e}"
        for task, row in results["prediction"].items()))
  if "training" in results:
    print_table("training", results["training"],
                ["bert_tf_bucketed", "bert_tf", "model_garden"])
  if args.output_json:
    with open(args.output_json, "w") as writer:
      json.dump({"config": vars(args), "results": results}, writer, indent=2)


if __name__ == "__main__":
  main()
