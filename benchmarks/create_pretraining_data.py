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

With --shards=N, the text's documents are shuffled into N files of
--target_mb in all, and three runs write one output per file: the original,
one process per file, --parallel at a time (its README's advice for big
corpora); bert_tf --num_workers=--parallel; and bert_tf on Apache Beam's
DirectRunner with --parallel workers (run it with a python that has the
beam extra). Memory is the peak of all the run's processes together.
--rounds=N runs the one-file comparison N times, alternating, and shows
the median time (on a shared machine, one run can be off by a fifth).
"""

import argparse
import concurrent.futures
import itertools
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import machine

from bert_tf.pretraining import pipeline as pretraining_data

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
  parser.add_argument("--do_lower_case", default="True",
                      choices=["True", "False"])
  parser.add_argument("--shards", type=int, default=0,
                      help="0: one file; N: N files, three sharded runs")
  parser.add_argument("--parallel", type=int, default=2,
                      help="processes or workers of the sharded runs")
  parser.add_argument("--rounds", type=int, default=1,
                      help="one file: runs of each, alternating; the "
                           "median time and the largest memory are shown")
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


def timed_runs(commands, parallel=1):
  """(wall seconds, peak MB of all their processes together) of commands
  run in fresh processes, `parallel` at a time."""
  peak, done = _MemoryPeak(), threading.Event()
  sampler = threading.Thread(target=peak.sample_until, args=(done,))
  sampler.start()
  start = time.perf_counter()
  try:
    with concurrent.futures.ThreadPoolExecutor(parallel) as pool:
      list(pool.map(_run_logged, commands))
  finally:
    done.set()
    sampler.join()
  return time.perf_counter() - start, peak.megabytes


def _run_logged(command):
  with tempfile.TemporaryFile() as log:
    if subprocess.run(command, stdout=log, stderr=log,
                      check=False).returncode != 0:
      log.seek(0)
      raise RuntimeError(f"{command[:2]} failed:\n"
                         f"{log.read().decode('utf-8', 'replace')[-3000:]}")


class _MemoryPeak:
  """The largest sum of proportional set size (PSS: shared pages divided
  among the processes sharing them, so that forks and shared libraries
  count once) over this process's descendants, sampled every 250 ms (more
  often costs a core a third of its time)."""

  def __init__(self):
    self.megabytes = 0.0

  def sample_until(self, done):
    while not done.wait(0.25):
      self.megabytes = max(self.megabytes, sum(
          _pss_mb(pid) for pid in _descendants(os.getpid())))


def _descendants(root):
  parents = {}
  for name in os.listdir("/proc"):
    if name.isdigit():
      try:
        with open(f"/proc/{name}/stat", encoding="utf-8") as reader:
          parents[int(name)] = int(reader.read().rsplit(")", 1)[1].split()[1])
      except OSError:
        continue
  found, frontier = [], [root]
  while frontier:
    children = [pid for pid, parent in parents.items()
                if parent in frontier]
    found += children
    frontier = children
  return found


def _pss_mb(pid):
  try:
    with open(f"/proc/{pid}/smaps_rollup", encoding="utf-8") as reader:
      for line in reader:
        if line.startswith("Pss:"):
          return int(line.split()[1]) / 1024
  except OSError:
    pass
  return 0.0


def same_records(path, other):
  """Whether two TFRecord files hold the same tf.train.Examples in the same
  order (the bytes of equal Examples differ between protobuf versions: the
  original serialises a map), read one record at a time."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  for ours, theirs in itertools.zip_longest(
      tf.data.TFRecordDataset(path).as_numpy_iterator(),
      tf.data.TFRecordDataset(other).as_numpy_iterator()):
    if ours is None or theirs is None or (
        ours != theirs and tf.train.Example.FromString(ours)
        != tf.train.Example.FromString(theirs)):
      return False
  return True


def count_records(path):
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  return sum(1 for _ in tf.data.TFRecordDataset(path))


def make_shards(args, source, work_dir):
  """--shards files of --target_mb in all, each the source's documents in
  its own random order (no document twice in a file, unless the source is
  smaller than a file)."""
  with open(source, encoding="utf-8") as reader:
    documents = [document.strip("\n") + "\n\n"
                 for document in reader.read().split("\n\n")
                 if document.strip()]
  directory = os.path.join(work_dir, "corpus")
  os.makedirs(directory)
  paths = []
  for index in range(args.shards):
    order = list(documents)
    random.Random(index).shuffle(order)
    path = os.path.join(directory, f"part{index:03d}.txt")
    with open(path, "w", encoding="utf-8") as writer:
      size, position = 0, 0
      while size < args.target_mb * 1e6 / args.shards:
        document = order[position % len(order)]
        writer.write(document)
        size += len(document.encode("utf-8"))
        position += 1
    paths.append(path)
  return paths


def print_results(results, size_mb, note):
  print(f"{size_mb:.2f} MB of text, {note}, {os.cpu_count()} cores; wall "
        f"time and peak memory (PSS) of all the run's processes together")
  print(f"{'':<22} {'seconds':>8} {'MB/s':>6} {'peak MB':>8} {'speed-up':>8} "
        f"{'memory':>7}")
  original_s, original_mb = results["original"]
  for name, (seconds, peak) in results.items():
    print(f"{name:<22} {seconds:>8.2f} {size_mb / seconds:>6.2f} "
          f"{peak:>8.0f} {original_s / seconds:>7.1f}x "
          f"{peak / original_mb:>7.2f}")


def main():
  args = parse_args()
  print(machine.described_in_child(), flush=True)
  work_dir = tempfile.mkdtemp()
  shim = os.path.join(work_dir, "run_original.py")
  with open(shim, "w", encoding="utf-8") as writer:
    writer.write(_ORIGINAL_SHIM.format(
        original_dir=os.path.abspath(args.original_dir)))
  flags = [f"--vocab_file={args.vocab_file}",
           f"--do_lower_case={args.do_lower_case}",
           f"--dupe_factor={args.dupe_factor}",
           f"--max_seq_length={args.max_seq_length}",
           f"--max_predictions_per_seq={args.max_predictions_per_seq}"]
  original = [sys.executable, shim, *flags]
  ours = [sys.executable, os.path.join(
      PROJECT_DIR, "run_scripts", "create_pretraining_data.py"), *flags]
  if args.shards:
    compare_sharded(args, work_dir, original, ours)
  else:
    compare_one_file(args, work_dir, original, ours)


def compare_one_file(args, work_dir, original, ours):
  input_file = make_input(args, work_dir)
  outputs = {name: os.path.join(work_dir, f"{name}.tfrecord")
             for name in ("original", "bert_tf")}
  runs = {"original": [], "bert_tf": []}
  for _ in range(args.rounds):  # alternating, so drift hits both alike
    for name, command in (("original", original), ("bert_tf", ours)):
      runs[name].append(timed_runs([command + [
          f"--input_file={input_file}", f"--output_file={outputs[name]}"]]))
  results = {name: (statistics.median(seconds for seconds, _ in timings),
                    max(peak for _, peak in timings))
             for name, timings in runs.items()}
  print_results(results, os.path.getsize(input_file) / 1e6,
                f"median of {args.rounds}, "
                f"dupe_factor={args.dupe_factor}, max_seq_length="
                f"{args.max_seq_length}, "
                f"{count_records(outputs['original'])} instances")
  print(f"records identical: "
        f"{same_records(outputs['bert_tf'], outputs['original'])}")


def compare_sharded(args, work_dir, original, ours):
  shards = make_shards(args, make_input(args, work_dir), work_dir)
  output_dirs = {name: os.path.join(work_dir, name) for name in (
      "original", "bert_tf --num_workers", "bert_tf --beam_runner")}
  os.makedirs(output_dirs["original"])
  glob = os.path.join(os.path.dirname(shards[0]), "*.txt")
  results = {
      "original": timed_runs(
          [original + [f"--input_file={shard}", "--output_file="
                       + pretraining_data.output_file_for(
                           shard, output_dirs["original"])]
           for shard in shards], args.parallel),
      "bert_tf --num_workers": timed_runs([ours + [
          f"--input_file={glob}", f"--num_workers={args.parallel}",
          f"--output_dir={output_dirs['bert_tf --num_workers']}"]]),
      "bert_tf --beam_runner": timed_runs([ours + [
          f"--input_file={glob}", "--beam_runner=DirectRunner",
          f"--num_workers={args.parallel}",
          f"--output_dir={output_dirs['bert_tf --beam_runner']}"]]),
  }
  size_mb = sum(os.path.getsize(shard) for shard in shards) / 1e6
  print_results(results, size_mb,
                f"{len(shards)} files, dupe_factor={args.dupe_factor}, "
                f"max_seq_length={args.max_seq_length}, "
                f"--parallel={args.parallel}")
  print_equality(output_dirs)


def print_equality(output_dirs):
  """Whether each sharded run wrote the original's records for every file."""
  names = sorted(os.listdir(output_dirs["original"]))
  for name, directory in list(output_dirs.items())[1:]:
    same = sorted(os.listdir(directory)) == names and all(
        same_records(os.path.join(directory, shard),
                     os.path.join(output_dirs["original"], shard))
        for shard in names)
    print(f"{name}: records of all {len(names)} files equal to the "
          f"original's: {same}")


if __name__ == "__main__":
  main()
