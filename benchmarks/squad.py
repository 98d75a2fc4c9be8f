"""SQuAD feature conversion and post-processing: bert_tf against the original.

Times, on the same predict file and the same logits, in the same run:

  features   read_squad_examples + convert_examples_to_features
  answers    write_predictions: n-best, get_final_text, softmax, and
             predictions.json, nbest_predictions.json (null_odds.json)

for the original google-research/bert run_squad.py (under
tensorflow.compat.v1, in its own process, from a checkout you pass with
--original_dir; nothing of it is kept here) and for bert_tf
(tasks/squad: examples, features, answers). The logits look trained
(tests/support/squad_reference.peaked_logits: a peak on one context span
per feature, a high null score on some), so the original never falls back
to its "empty" answer. Each side runs --repeats times from the file; prints the
median seconds, the ratios, and whether the files are identical.

    .venv/bin/python benchmarks/squad.py --original_dir=/path/to/bert \\
        [--predict_file=dev-v1.1.json] [--version_2_with_negative]
"""

import argparse
import filecmp
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

PROJECT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, PROJECT_DIR)
SHARED_DIR = os.path.join(os.path.dirname(PROJECT_DIR), "shared")

# pylint: disable=g-import-not-at-top,wrong-import-position
import machine
from bert_tf import tokenization
from bert_tf.tasks.squad import answers as squad_answers, examples as squad
from bert_tf.text.squad import features as squad_features
from bert_tf.text.squad.answer_options import AnswerOptions
from tests.support.squad_reference import peaked_logits

# Runs the original's functions unchanged under TF2's compat.v1 API.
_ORIGINAL = """
import json, sys, time
import numpy as np
import tensorflow as tf
sys.modules["tensorflow"] = tf.compat.v1
args = json.loads(sys.argv[1])
sys.path.insert(0, args["original_dir"])
import run_squad, tokenization
run_squad.FLAGS(["original", "--vocab_file=x", "--bert_config_file=x",
                 "--output_dir=x"])
run_squad.FLAGS.version_2_with_negative = args["version_2_with_negative"]
start = time.perf_counter()
examples = run_squad.read_squad_examples(args["predict_file"], False)
tokenizer = tokenization.FullTokenizer(args["vocab_file"], True)
features = []
run_squad.convert_examples_to_features(
    examples, tokenizer, args["max_seq_length"], args["doc_stride"],
    args["max_query_length"], False, features.append)
features_seconds = time.perf_counter() - start
logits = np.load(args["logits"])
results = [run_squad.RawResult(
    unique_id=feature.unique_id,
    start_logits=[float(x) for x in logits["start_logits"][index]],
    end_logits=[float(x) for x in logits["end_logits"][index]])
           for index, feature in enumerate(features)]
start = time.perf_counter()
run_squad.write_predictions(
    examples, features, results, args["n_best_size"],
    args["max_answer_length"], True, *args["outputs"])
print(json.dumps({"features": features_seconds,
                  "answers": time.perf_counter() - start,
                  "num_features": len(features)}))
"""

_FILES = ("predictions.json", "nbest_predictions.json", "null_odds.json")


def parse_args():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--original_dir", required=True,
                      help="a checkout of google-research/bert")
  parser.add_argument("--predict_file", default=os.path.join(
      SHARED_DIR, "data", "squad", "dev-v1.1.json"))
  parser.add_argument("--vocab_file", default=os.path.join(
      SHARED_DIR, "vocab", "bert-base-uncased-vocab.txt"))
  parser.add_argument("--max_seq_length", type=int, default=384)
  parser.add_argument("--doc_stride", type=int, default=128)
  parser.add_argument("--max_query_length", type=int, default=64)
  parser.add_argument("--n_best_size", type=int, default=20)
  parser.add_argument("--max_answer_length", type=int, default=30)
  parser.add_argument("--version_2_with_negative", action="store_true")
  parser.add_argument("--repeats", type=int, default=3,
                      help="runs of each side; the median is reported")
  return parser.parse_args()


def run_ours(args, output_dir):
  """({stage: [seconds per run]}, features), each run from the file."""
  timings = {"features": [], "answers": []}
  for _ in range(args.repeats):
    start = time.perf_counter()
    examples = squad.read_squad_examples(args.predict_file, False,
                                         args.version_2_with_negative)
    tokenizer = tokenization.FullTokenizer(args.vocab_file, True)
    features = squad_features.convert_examples_to_features(
        examples, tokenizer, args.max_seq_length, args.doc_stride,
        args.max_query_length, is_training=False)
    timings["features"].append(time.perf_counter() - start)
    start_logits, end_logits = peaked_logits(
        features["input_mask"], features["segment_ids"], seed=0)
    start = time.perf_counter()
    answers = squad_answers.predict_answers(
        examples, features, start_logits, end_logits, tokenizer,
        AnswerOptions(
            n_best_size=args.n_best_size,
            max_answer_length=args.max_answer_length,
            version_2_with_negative=args.version_2_with_negative))
    parts = [answers.predictions, answers.nbest]
    if args.version_2_with_negative:
      parts.append(answers.null_odds)
    for name, part in zip(_FILES, parts):
      with open(os.path.join(output_dir, "ours_" + name), "w",
                encoding="utf-8") as writer:
        squad_answers.write_json(part, writer)
    timings["answers"].append(time.perf_counter() - start)
  np.savez(os.path.join(output_dir, "logits.npz"),
           start_logits=start_logits, end_logits=end_logits)
  return timings, features


def run_original(args, output_dir):
  """{stage: [seconds per run], num_features}: each run in a fresh process,
  as a user runs it (one process's repeats slow down as its heap grows)."""
  settings = {**vars(args), "original_dir": os.path.abspath(
      args.original_dir), "logits": os.path.join(output_dir, "logits.npz"),
              "outputs": [os.path.join(output_dir, "original_" + name)
                          for name in _FILES]}
  timings = {"features": [], "answers": []}
  for _ in range(args.repeats):
    result = subprocess.run([sys.executable, "-c", _ORIGINAL,
                             json.dumps(settings)], capture_output=True,
                            text=True, check=False)
    if result.returncode != 0:
      sys.exit(f"the original failed:\n{result.stderr[-3000:]}")
    run = json.loads(result.stdout.strip().splitlines()[-1])
    for stage, seconds in timings.items():
      seconds.append(run[stage])
  return {**timings, "num_features": run["num_features"]}


def main():
  args = parse_args()
  print(machine.described_in_child(), flush=True)
  with tempfile.TemporaryDirectory() as output_dir:
    ours, features = run_ours(args, output_dir)
    original = run_original(args, output_dir)
    if original["num_features"] != len(features["unique_ids"]):
      sys.exit(f"features differ in number: {original['num_features']} vs "
               f"{len(features['unique_ids'])}")
    names = _FILES if args.version_2_with_negative else _FILES[:2]
    identical = {name: filecmp.cmp(
        os.path.join(output_dir, "original_" + name),
        os.path.join(output_dir, "ours_" + name), shallow=False)
                 for name in names}
  print(f"{os.path.basename(args.predict_file)}: "
        f"{len(features['unique_ids'])} features, max_seq_length "
        f"{args.max_seq_length}, doc_stride {args.doc_stride}; median of "
        f"{args.repeats} runs")
  print(f"{'stage':<10} {'original s':>11} {'bert_tf s':>10} {'ratio':>7}")
  medians = {side: {stage: statistics.median(seconds)
                    for stage, seconds in timings.items()
                    if stage != "num_features"}
             for side, timings in (("original", original), ("ours", ours))}
  medians["original"]["total"] = statistics.median(
      [sum(run) for run in zip(original["features"], original["answers"])])
  medians["ours"]["total"] = statistics.median(
      [sum(run) for run in zip(ours["features"], ours["answers"])])
  for stage in ("features", "answers", "total"):
    theirs, mine = medians["original"][stage], medians["ours"][stage]
    print(f"{stage:<10} {theirs:>11.2f} {mine:>10.2f} {theirs / mine:>6.1f}x")
  for name, same in identical.items():
    print(f"{name}: {'identical' if same else 'DIFFERENT'}")


if __name__ == "__main__":
  main()
