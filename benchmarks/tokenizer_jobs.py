"""A one-off tokenising job, as whole processes: bert_tf against the original
and Hugging Face's Rust tokenizer; and each one's passes in a long-lived
process.

What it measures: the wall time of a fresh process that reads a text file
and keeps the token ids of every line, start-up and imports included, for

  original   google-research/bert's tokenization.py (from --original_dir,
             under tensorflow.compat.v1, which its module imports):
             convert_tokens_to_ids(tokenize(line)) for each line;
  bert_tf    FullTokenizer.encode_many(lines), pure Python on every core
             (no TensorFlow: bert_tf.text.batch_encoding adds the compiled
             path for batches past 4 MB in a process that has it);
  rust       Hugging Face `tokenizers`' BertWordPieceTokenizer (Rust, on
             every core), encode_batch(lines) without special tokens;
             skipped, saying so, where `tokenizers` is not installed (it is
             no dependency of bert_tf: `pip install tokenizers`);

each process printing a digest of all its ids, which must equal the
original's. Printed: seconds of each, the ratios and whether the ids are
equal, for each --target_mb. Then, with --warm_passes=N, the steady state
of a long-lived process (a tokenising service, a data loader): bert_tf and
rust each tokenise the same lines 1 + N times in one process (once per
round), and the first pass and the median of the next N are printed against
the original's one pass (the original remembers nothing between passes).

    .venv/bin/python benchmarks/tokenizer_jobs.py \\
        --original_dir=/path/to/google-research/bert [--input_file=...] \\
        [--vocab_file=...] [--no_lower_case] [--target_mb=1,28] [--rounds=5] \\
        [--warm_passes=3]

Without --input_file the text is the project's docstring corpus
(run_scripts/make_docstring_corpus.py). Each --target_mb is a file of the
input's first lines (or of it repeated) of that size. --rounds=N runs each
job N times, alternating, and shows the median times (one run on a shared
machine can be off by a fifth).
"""

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# pylint: disable=g-import-not-at-top,wrong-import-position
from create_pretraining_data import PROJECT_DIR, OFFICIAL_UNCASED, timed_runs
import machine
# pylint: enable=g-import-not-at-top,wrong-import-position

# Every job reads the lines, defines encode(lines) and ends with this: its
# passes, then a digest of every line's ids and each pass's seconds.
_READ = """
with open({input_file!r}, encoding="utf-8") as reader:
  lines = reader.read().splitlines()
"""
_PASSES = """
import hashlib
import json
import time
seconds = []
for _ in range({passes}):
  start = time.perf_counter()
  ids = encode(lines)
  seconds.append(time.perf_counter() - start)
digest = hashlib.sha256()
for line_ids in ids:
  digest.update(repr(list(line_ids)).encode())
with open({result_file!r}, "w") as writer:
  json.dump({{"digest": digest.hexdigest(), "seconds": seconds}}, writer)
"""
JOBS = {
    "original": """
import sys
import tensorflow as tf
sys.modules["tensorflow"] = tf.compat.v1
sys.path.insert(0, {original_dir!r})
import tokenization
tokenizer = tokenization.FullTokenizer({vocab_file!r}, {lower!r})
encode = lambda lines: [
    tokenizer.convert_tokens_to_ids(tokenizer.tokenize(line))
    for line in lines]
""",
    "bert_tf": """
from bert_tf import tokenization
tokenizer = tokenization.FullTokenizer({vocab_file!r}, {lower!r})
encode = tokenizer.encode_many
""",
    "rust": """
from tokenizers import BertWordPieceTokenizer
tokenizer = BertWordPieceTokenizer(
    {vocab_file!r}, clean_text=True, handle_chinese_chars=True,
    strip_accents={lower!r}, lowercase={lower!r})
encode = lambda lines: [encoding.ids for encoding in tokenizer.encode_batch(
    lines, add_special_tokens=False)]
""",
}


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
  parser.add_argument("--warm_passes", type=int, default=0,
                      help="passes after the first in one process")
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


def run_job(name, passes=1, **values):
  """(process seconds, digest, each pass's seconds) of a job in a fresh
  process."""
  with tempfile.NamedTemporaryFile(suffix=".json") as result:
    seconds, _ = timed_runs([[sys.executable, "-c", (
        JOBS[name] + _READ + _PASSES).format(
            result_file=result.name, passes=passes, **values)]])
    with open(result.name, encoding="utf-8") as reader:
      job = json.load(reader)
  return seconds, job["digest"], job["seconds"]


def main():
  args = parse_args()
  print(machine.described_in_child(), flush=True)
  work_dir = tempfile.mkdtemp()
  lower = not args.no_lower_case
  peers = ["bert_tf"]
  if importlib.util.find_spec("tokenizers") is None:
    print("rust: skipped, Hugging Face's `tokenizers` is not installed "
          "(pip install tokenizers)")
  else:
    peers.append("rust")
  print(f"vocab {os.path.basename(args.vocab_file)}, do_lower_case={lower}, "
        f"{os.cpu_count()} cores; wall time of the whole process, median of "
        f"{args.rounds}")
  for size_mb in (float(value) for value in args.target_mb.split(",")):
    input_file, size = job_input(args, size_mb, work_dir)
    values = dict(vocab_file=os.path.abspath(args.vocab_file), lower=lower,
                  input_file=input_file,
                  original_dir=os.path.abspath(args.original_dir))
    process, passes, equal = {}, {}, {name: True for name in peers}
    for _ in range(args.rounds):  # alternating, so drift hits all alike
      for name in ["original"] + peers:
        seconds, digest, pass_seconds = run_job(name, **values)
        process.setdefault(name, []).append(seconds)
        passes.setdefault(name, []).append(pass_seconds[0])
        if name == "original":
          expected = digest
        else:
          equal[name] = equal[name] and digest == expected
    theirs = statistics.median(process["original"])
    print(f"{size / 1e6:.1f} MB: original {theirs:.2f} s", end="")
    for name in peers:
      ours = statistics.median(process[name])
      print(f"; {name} {ours:.2f} s ({theirs / ours:.1f}x, ids equal: "
            f"{equal[name]})", end="")
    print(flush=True)
    if args.warm_passes:
      original_pass = statistics.median(passes["original"])
      print(f"  in one process, the original's pass {original_pass:.2f} s;",
            end="")
      firsts, warms = {}, {}
      for _ in range(args.rounds):
        for name in peers:
          _, _, pass_seconds = run_job(name, 1 + args.warm_passes, **values)
          firsts.setdefault(name, []).append(pass_seconds[0])
          warms.setdefault(name, []).append(
              statistics.median(pass_seconds[1:]))
      for name in peers:
        first = statistics.median(firsts[name])
        warm = statistics.median(warms[name])
        print(f" {name} first pass {first:.2f} s "
              f"({original_pass / first:.1f}x), then {warm:.2f} s "
              f"({original_pass / warm:.1f}x);", end="")
      print(flush=True)


if __name__ == "__main__":
  main()
