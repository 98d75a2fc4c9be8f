"""A one-off tokenising job, as whole processes: bert_tf against the original.

What it measures: the wall time of a fresh process that reads a text file
and keeps the token ids of every line, start-up and imports included, for

  original   google-research/bert's tokenization.py (from --original_dir,
             under tensorflow.compat.v1, which its module imports):
             convert_tokens_to_ids(tokenize(line)) for each line;
  bert_tf    FullTokenizer.encode_batch(lines), whichever path it takes
             (bert_tf.tokenization: pure Python on every core below its
             thresholds; TensorFlow ops above them);

each process printing a digest of all its ids, which must be equal. Printed:
seconds of each, the ratio and whether the ids are equal, for each --target_mb.

    .venv/bin/python benchmarks/tokenizer_jobs.py \\
        --original_dir=/path/to/google-research/bert [--input_file=...] \\
        [--vocab_file=...] [--no_lower_case] [--target_mb=1,28] [--rounds=5]

Without --input_file the text is the project's docstring corpus
(run_scripts/make_docstring_corpus.py). Each --target_mb is a file of the
input's first lines (or of it repeated) of that size. --rounds=N runs each
job N times, alternating, and shows the median times (one run on a shared
machine can be off by a fifth).
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# pylint: disable=g-import-not-at-top,wrong-import-position
from create_pretraining_data import PROJECT_DIR, OFFICIAL_UNCASED, timed_runs
# pylint: enable=g-import-not-at-top,wrong-import-position

# Both jobs end by writing this digest of every line's ids.
_DIGEST = """
import hashlib
digest = hashlib.sha256()
for line_ids in ids:
  digest.update(repr(line_ids).encode())
open({digest_file!r}, "w").write(digest.hexdigest())
"""
_ORIGINAL_JOB = """
import sys
import tensorflow as tf
sys.modules["tensorflow"] = tf.compat.v1
sys.path.insert(0, {original_dir!r})
import tokenization
tokenizer = tokenization.FullTokenizer({vocab_file!r}, {lower!r})
with open({input_file!r}, encoding="utf-8") as reader:
  ids = [tokenizer.convert_tokens_to_ids(tokenizer.tokenize(line))
         for line in reader.read().splitlines()]
""" + _DIGEST
_BERT_TF_JOB = """
from bert_tf import tokenization
tokenizer = tokenization.FullTokenizer({vocab_file!r}, {lower!r})
with open({input_file!r}, encoding="utf-8") as reader:
  ids = tokenizer.encode_batch(reader.read().splitlines())
""" + _DIGEST


def parse_args():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--original_dir", required=True,
                      help="a checkout of google-research/bert")
  parser.add_argument("--vocab_file", default=OFFICIAL_UNCASED)
  parser.add_argument("--no_lower_case", action="store_true")
  parser.add_argument("--input_file", default=None)
  parser.add_argument("--target_mb", default="1",
                      help="comma-separated sizes of the jobs, in MB")
  parser.add_argument("--rounds", type=int, default=1,
                      help="runs of each job, alternating; medians shown")
  return parser.parse_args()


def job_input(args, size_mb, work_dir):
  """A file of the input's lines (repeated as needed) up to size_mb."""
  path = args.input_file
  if path is None:
    path = os.path.join(work_dir, "docstrings.txt")
    if not os.path.exists(path):
      subprocess.run([sys.executable, os.path.join(
          PROJECT_DIR, "run_scripts", "make_docstring_corpus.py"),
                      f"--output_file={path}"], check=True,
                     capture_output=True)
  with open(path, encoding="utf-8") as reader:
    lines = reader.read().splitlines()
  job = os.path.join(work_dir, f"job_{size_mb}.txt")
  size = 0
  with open(job, "w", encoding="utf-8") as writer:
    while size < size_mb * 1e6:
      for line in lines:
        writer.write(line + "\n")
        size += len(line.encode("utf-8")) + 1
        if size >= size_mb * 1e6:
          break
  return job, size


def run_job(template, **values):
  """(seconds, digest) of a job in a fresh process."""
  with tempfile.NamedTemporaryFile(suffix=".txt") as digest:
    seconds, _ = timed_runs([[sys.executable, "-c", template.format(
        digest_file=digest.name, **values)]])
    with open(digest.name, encoding="utf-8") as reader:
      return seconds, reader.read()


def main():
  args = parse_args()
  work_dir = tempfile.mkdtemp()
  lower = not args.no_lower_case
  print(f"vocab {os.path.basename(args.vocab_file)}, do_lower_case={lower}, "
        f"{os.cpu_count()} cores; wall time of the whole process, median of "
        f"{args.rounds}")
  print(f"{'MB':>6} {'original s':>11} {'bert_tf s':>10} {'ratio':>6} "
        f"{'ids equal':>10}")
  for size_mb in (float(value) for value in args.target_mb.split(",")):
    input_file, size = job_input(args, size_mb, work_dir)
    values = dict(vocab_file=os.path.abspath(args.vocab_file), lower=lower,
                  input_file=input_file,
                  original_dir=os.path.abspath(args.original_dir))
    theirs, ours, equal = [], [], True
    for _ in range(args.rounds):  # alternating, so drift hits both alike
      seconds, their_digest = run_job(_ORIGINAL_JOB, **values)
      theirs.append(seconds)
      seconds, our_digest = run_job(_BERT_TF_JOB, **values)
      ours.append(seconds)
      equal = equal and our_digest == their_digest
    theirs, ours = statistics.median(theirs), statistics.median(ours)
    print(f"{size / 1e6:>6.1f} {theirs:>11.2f} {ours:>10.2f} "
          f"{theirs / ours:>6.1f} {str(equal):>10}", flush=True)


if __name__ == "__main__":
  main()
