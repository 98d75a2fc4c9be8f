"""create_pretraining_data: bert_tf against the original, side by side.

Runs the original google-research/bert create_pretraining_data.py (under
tensorflow.compat.v1, from a checkout you pass with --original_dir; nothing of
it is kept here) and run_scripts/create_pretraining_data.py on the same ~1 MB
of English text with the same flags, each in a fresh process; prints wall
time, peak resident memory, the ratios, and whether the records are equal.

    .venv/bin/python benchmarks/create_pretraining_data.py \\
        --original_dir=/path/to/google-research/bert --vocab_file=vocab.txt

Without --input_file the text is the project's docstring corpus
(run_scripts/make_docstring_corpus.py) repeated to --target_mb.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

PROJECT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OFFICIAL_UNCASED = os.path.join(os.path.dirname(PROJECT_DIR), "shared",
                                "vocab", "bert-base-uncased-vocab.txt")

# Runs the original script unchanged under TF2's compat.v1 API.
_ORIGINAL_SHIM = """
import sys
import tensorflow as tf
tf.compat.v1.disable_eager_execution()
sys.modules["tensorflow"] = tf.compat.v1
sys.path.insert(0, {original_dir!r})
import create_pretraining_data
from absl import app
app.run(create_pretraining_data.main)
"""


def parse_args():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--original_dir", required=True,
                      help="a checkout of google-research/bert")
  parser.add_argument("--vocab_file", default=OFFICIAL_UNCASED)
  parser.add_argument("--input_file", default=None)
  parser.add_argument("--target_mb", type=float, default=1.0)
  parser.add_argument("--dupe_factor", type=int, default=5)
  parser.add_argument("--max_seq_length", type=int, default=128)
  parser.add_argument("--max_predictions_per_seq", type=int, default=20)
  return parser.parse_args()


def make_input(args, work_dir):
  """The input file: --input_file, or docstrings repeated to --target_mb."""
  if args.input_file:
    return args.input_file
  corpus = os.path.join(work_dir, "docstrings.txt")
  subprocess.run([sys.executable, os.path.join(
      PROJECT_DIR, "run_scripts", "make_docstring_corpus.py"),
                  f"--output_file={corpus}"], check=True, capture_output=True)
  with open(corpus, encoding="utf-8") as reader:
    documents = reader.read().rstrip("\n") + "\n\n"
  path = os.path.join(work_dir, "input.txt")
  with open(path, "w", encoding="utf-8") as writer:
    size = 0
    while size < args.target_mb * 1e6:
      writer.write(documents)
      size += len(documents.encode("utf-8"))
  return path


def timed_run(command):
  """(wall seconds, peak RSS in MB) of a command in a fresh process."""
  with tempfile.TemporaryFile() as log:
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=log, stderr=log)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
      log.seek(0)
      raise RuntimeError(f"{command[:2]} failed:\n"
                         f"{log.read().decode('utf-8', 'replace')[-3000:]}")
  return seconds, usage.ru_maxrss / 1024


def records(path):
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  return [tf.train.Example.FromString(record.numpy())
          for record in tf.data.TFRecordDataset(path)]


def main():
  args = parse_args()
  work_dir = tempfile.mkdtemp()
  input_file = make_input(args, work_dir)
  shim = os.path.join(work_dir, "run_original.py")
  with open(shim, "w", encoding="utf-8") as writer:
    writer.write(_ORIGINAL_SHIM.format(
        original_dir=os.path.abspath(args.original_dir)))
  flags = [f"--input_file={input_file}", f"--vocab_file={args.vocab_file}",
           "--do_lower_case=True", f"--dupe_factor={args.dupe_factor}",
           f"--max_seq_length={args.max_seq_length}",
           f"--max_predictions_per_seq={args.max_predictions_per_seq}"]
  outputs = {name: os.path.join(work_dir, f"{name}.tfrecord")
             for name in ("original", "bert_tf")}
  commands = {
      "original": [sys.executable, shim],
      "bert_tf": [sys.executable, os.path.join(
          PROJECT_DIR, "run_scripts", "create_pretraining_data.py")],
  }
  results = {name: timed_run(command + flags
                             + [f"--output_file={outputs[name]}"])
             for name, command in commands.items()}
  ours, theirs = records(outputs["bert_tf"]), records(outputs["original"])

  size_mb = os.path.getsize(input_file) / 1e6
  print(f"{size_mb:.2f} MB of text, dupe_factor={args.dupe_factor}, "
        f"max_seq_length={args.max_seq_length}, {len(theirs)} instances, "
        f"{os.cpu_count()} cores; wall time and peak RSS of the whole process")
  print(f"{'':<10} {'seconds':>8} {'MB/s':>6} {'peak MB':>8}")
  for name, (seconds, peak) in results.items():
    print(f"{name:<10} {seconds:>8.2f} {size_mb / seconds:>6.2f} {peak:>8.0f}")
  (original_s, original_mb), (ours_s, ours_mb) = (results["original"],
                                                  results["bert_tf"])
  print(f"throughput ratio bert_tf / original: {original_s / ours_s:.1f}x; "
        f"peak memory: {ours_mb / original_mb:.2f} of the original's")
  print(f"records identical: {ours == theirs} ({len(ours)} vs {len(theirs)})")


if __name__ == "__main__":
  main()
