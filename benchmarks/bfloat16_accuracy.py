"""Fine-tuning in bfloat16 against float32: dev accuracy on SST-2.

run_classifier fine-tunes the README demo's pretrained tiny BERT
(run_scripts/demo.py: a WordPiece vocabulary of Python's docstrings and a
BERT of hidden 64 and 2 layers pretrained on them) on SST-2 from
../shared/data/glue, twice with the same flags and --seed: --dtype=float32
and --dtype=bfloat16 (float32 variables, Adam slots and checkpoints,
bfloat16 compute; its eval and prediction compute in bfloat16 too). It
trains on train.tsv (67,349 sentences; --train_examples: its first so
many) and evaluates on the whole dev set (872 sentences); the dev
sentences are predicted as a test.tsv too, so that the two models' labels
can be compared sentence by sentence.

Printed first: the CPU and its bfloat16 units. Then each run's dev accuracy
(run_classifier's eval_results.txt), the difference in points (the goal:
within 0.5), the share of dev sentences the two models label alike, and
each run's wall time (one run each: a rough figure, not a measurement).

Run from the repository root (the demo once, about 5 minutes; then the
two runs, about 15 minutes on 2 CPU cores):

  .venv/bin/python run_scripts/demo.py --output_dir=/tmp/demo
  .venv/bin/python benchmarks/bfloat16_accuracy.py --demo_dir=/tmp/demo \\
      [--train_examples=20000 --num_train_epochs=2 --learning_rate=2e-4] \\
      [--seed=1] [--output_json=PATH]
"""

import argparse
import json
import os
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# pylint: disable=g-import-not-at-top,wrong-import-position
import machine
from extract_features import PROJECT_DIR, SHARED_DIR, timed

import numpy as np
import tensorflow as tf
# pylint: enable=g-import-not-at-top,wrong-import-position

DTYPES = ("float32", "bfloat16")
SST2 = os.path.join(SHARED_DIR, "data", "glue", "SST-2")
# The demo's model: its position table holds 64.
MAX_SEQ_LENGTH = 64


def parse_args(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--demo_dir", required=True,
                      help="run_scripts/demo.py's --output_dir")
  parser.add_argument("--train_examples", type=int,
                      help="the first this many of train.tsv's sentences "
                      "(default: all)")
  parser.add_argument("--num_train_epochs", type=float, default=2.0)
  parser.add_argument("--learning_rate", type=float, default=2e-4)
  parser.add_argument("--train_batch_size", type=int, default=32)
  parser.add_argument("--seed", type=int, default=1)
  parser.add_argument("--output_json")
  args = parser.parse_args(argv)
  args.init_checkpoint = tf.train.latest_checkpoint(
      os.path.join(args.demo_dir, "pretraining"))
  if args.init_checkpoint is None:
    parser.error(f"--demo_dir={args.demo_dir}: no pretraining checkpoint; "
                 "run run_scripts/demo.py --output_dir there first")
  if args.output_json and not os.path.isdir(
      os.path.dirname(os.path.abspath(args.output_json))):
    parser.error(f"--output_json={args.output_json}: no such directory")
  return args


def write_task(data_dir, train_examples):
  """SST-2's files in data_dir: the first train_examples of train.tsv
  (None: all), the dev set, and the dev sentences as a test.tsv. Returns
  the number of train sentences and the dev labels."""
  os.makedirs(data_dir)
  with open(os.path.join(SST2, "train.tsv"), encoding="utf-8") as reader:
    train = reader.readlines()[:None if train_examples is None
                               else train_examples + 1]
  with open(os.path.join(data_dir, "train.tsv"), "w",
            encoding="utf-8") as writer:
    writer.writelines(train)
  os.symlink(os.path.join(SST2, "dev.tsv"),
             os.path.join(data_dir, "dev.tsv"))
  with open(os.path.join(SST2, "dev.tsv"), encoding="utf-8") as reader:
    rows = [line.rstrip("\n").split("\t") for line in reader][1:]
  with open(os.path.join(data_dir, "test.tsv"), "w",
            encoding="utf-8") as writer:
    writer.write("index\tsentence\n")
    writer.writelines(f"{index}\t{sentence}\n"
                      for index, (sentence, _) in enumerate(rows))
  return len(train) - 1, np.array([int(label) for _, label in rows])


def command(args, data_dir, output_dir, dtype):
  """run_classifier's command line: the same flags in every dtype."""
  return [
      sys.executable, os.path.join(PROJECT_DIR, "run_scripts",
                                   "run_classifier.py"),
      "--task_name=SST-2", "--do_train", "--do_eval", "--do_predict",
      f"--data_dir={data_dir}",
      f"--vocab_file={args.demo_dir}/vocab.txt",
      f"--bert_config_file={args.demo_dir}/bert_config.json",
      f"--init_checkpoint={args.init_checkpoint}", "--do_lower_case",
      f"--max_seq_length={MAX_SEQ_LENGTH}",
      f"--train_batch_size={args.train_batch_size}",
      f"--learning_rate={args.learning_rate}",
      f"--num_train_epochs={args.num_train_epochs}",
      f"--seed={args.seed}", "--iterations_per_loop=100",
      "--eval_batch_size=32", "--predict_batch_size=32",
      f"--dtype={dtype}", f"--output_dir={output_dir}"]


def eval_accuracy(output_dir):
  with open(os.path.join(output_dir, "eval_results.txt"),
            encoding="utf-8") as reader:
    results = dict(line.rstrip("\n").split(" = ") for line in reader)
  return float(results["eval_accuracy"])


def dev_predictions(output_dir):
  """The label of each dev sentence (test_results.tsv's probabilities)."""
  return np.loadtxt(os.path.join(output_dir, "test_results.tsv"),
                    ndmin=2).argmax(-1)


def fine_tune(args, work, dtype, labels):
  """run_classifier in `dtype` on work/SST-2: its results (dev accuracy,
  the same recomputed from its dev predictions, seconds) and the label it
  predicts for each dev sentence."""
  output_dir = os.path.join(work, dtype)
  seconds = timed(command(args, os.path.join(work, "SST-2"), output_dir,
                          dtype))
  predictions = dev_predictions(output_dir)
  return {"eval_accuracy": eval_accuracy(output_dir),
          "predicted_accuracy": float(np.mean(predictions == labels)),
          "seconds": seconds}, predictions


def main():
  args = parse_args()
  print("\n".join(machine.describe()), flush=True)
  results = {}
  with tempfile.TemporaryDirectory(prefix="bfloat16_accuracy_") as work:
    train_examples, labels = write_task(os.path.join(work, "SST-2"),
                                        args.train_examples)
    print(f"SST-2: {train_examples} train sentences, "
          f"num_train_epochs {args.num_train_epochs:g}, batch "
          f"{args.train_batch_size}, learning rate {args.learning_rate:g}, "
          f"seed {args.seed}; dev {len(labels)} sentences; from "
          f"{args.init_checkpoint}", flush=True)
    predictions = {}
    for dtype in DTYPES:
      results[dtype], predictions[dtype] = fine_tune(args, work, dtype,
                                                     labels)
      print(f"{dtype:<9} dev accuracy "
            f"{100 * results[dtype]['eval_accuracy']:.2f}% in "
            f"{results[dtype]['seconds']:.0f} s", flush=True)
  difference = 100 * (results["bfloat16"]["eval_accuracy"]
                      - results["float32"]["eval_accuracy"])
  agreement = float(np.mean(predictions["bfloat16"] == predictions["float32"]))
  majority = max(np.mean(labels), 1 - np.mean(labels))
  print(f"bfloat16 - float32: {difference:+.2f} points (goal: within 0.5); "
        f"the same label on {100 * agreement:.2f}% of dev sentences; "
        f"majority class {100 * majority:.2f}%")
  if args.output_json:
    with open(args.output_json, "w", encoding="utf-8") as writer:
      json.dump({**results, "difference_points": difference,
                 "agreement": agreement, "args": vars(args)}, writer,
                indent=2)


if __name__ == "__main__":
  main()
