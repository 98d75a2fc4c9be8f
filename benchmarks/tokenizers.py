"""Throughput of each tokenizer path against the original pure-Python one.

Tokenises the same ~1 MB of English text (one line per text) with:

  exact      BasicTokenizer then WordpieceTokenizer, the original algorithm
             in pure Python, as the original FullTokenizer.tokenize ran it
             (the reference: ratio 1);
  encode     FullTokenizer.encode, the same in pure Python with each word's
             ids remembered, text by text, a fresh tokenizer each time;
  many       FullTokenizer.encode_many, the same for the whole batch, on
             every core (what create_pretraining_data uses), fresh;
  compiled   text.batch_encoding.CompiledEncoder, TensorFlow ops with exact
             fallback, built and traced beforehand;
  in_graph   bert_tf.text.InGraphTokenizer called eagerly on batches, as a
             SavedModel's serving signature runs it;
  tf_text    tensorflow-text's stock BertTokenizer, for context only: it is
             not identical to the original (its differing lines are counted).

Each path runs --repeats times; the median wall time is reported as MB/s,
lines/s and the ratio to the exact path measured in the same run.

    .venv/bin/python benchmarks/tokenizers.py [--vocab_file=...] \
        [--input_file=...] [--target_mb=1] [--no_lower_case]

Without --input_file the text is the project's docstring corpus
(run_scripts/make_docstring_corpus.py), repeated up to --target_mb.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import machine

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # pylint: disable=g-import-not-at-top
import tensorflow_text as tf_text

from bert_tf import tokenization
from bert_tf.text import InGraphTokenizer, batch_encoding

PROJECT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OFFICIAL_UNCASED = os.path.join(os.path.dirname(PROJECT_DIR), "shared",
                                "vocab", "bert-base-uncased-vocab.txt")
BATCH_SIZE = 8192


def parse_args():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--vocab_file", default=OFFICIAL_UNCASED if os.path.exists(
      OFFICIAL_UNCASED) else os.path.join(PROJECT_DIR, "vocab",
                                          "demo_uncased_vocab.txt"))
  parser.add_argument("--no_lower_case", action="store_true")
  parser.add_argument("--input_file", default=None)
  parser.add_argument("--target_mb", type=float, default=1.0)
  parser.add_argument("--repeats", type=int, default=5)
  return parser.parse_args()


def read_lines(args):
  """Non-empty lines of the input, repeated up to --target_mb."""
  path = args.input_file
  if path is None:
    path = os.path.join(tempfile.mkdtemp(), "docstrings.txt")
    subprocess.run([sys.executable, os.path.join(
        PROJECT_DIR, "run_scripts", "make_docstring_corpus.py"),
                    f"--output_file={path}"], check=True, capture_output=True)
  with open(path, encoding="utf-8") as reader:
    lines = [line for line in reader.read().splitlines() if line.strip()]
  target = args.target_mb * 1e6
  repeated, size = [], 0
  while size < target:
    for line in lines:
      repeated.append(line)
      size += len(line.encode("utf-8"))
      if size >= target:
        break
  return repeated, size


def batches(lines):
  return [tf.constant(lines[start:start + BATCH_SIZE])
          for start in range(0, len(lines), BATCH_SIZE)]


def median_seconds(run, repeats):
  times = []
  for _ in range(repeats):
    start = time.perf_counter()
    result = run()
    times.append(time.perf_counter() - start)
  return statistics.median(times), result


def main():
  args = parse_args()
  print(machine.described_in_child(), flush=True)
  lower = not args.no_lower_case
  lines, size = read_lines(args)
  tokenizer = tokenization.FullTokenizer(args.vocab_file, lower)
  in_graph = InGraphTokenizer(args.vocab_file, lower)
  stock = tf_text.BertTokenizer(args.vocab_file, lower_case=lower,
                                token_out_type=tf.int64)
  compiled = batch_encoding.CompiledEncoder(tokenizer)
  compiled(lines[:100])  # traces it
  in_graph(tf.constant(lines[:100]))
  stock.tokenize(tf.constant(lines[:100]))

  def exact():
    return [tokenizer.convert_tokens_to_ids(
        [piece for word in tokenizer.basic_tokenizer.tokenize(line)
         for piece in tokenizer.wordpiece_tokenizer.tokenize(word)])
            for line in lines]

  def encode():
    # A fresh tokenizer each time: its word cache starts empty.
    fresh = tokenization.FullTokenizer(args.vocab_file, lower)
    return [fresh.encode(line) for line in lines]

  def graph_path(tokenize):
    return lambda: [ids for batch in batches(lines)
                    for ids in tokenize(batch).to_list()]

  paths = {
      "exact": exact,
      "encode": encode,
      "many": lambda: tokenization.FullTokenizer(
          args.vocab_file, lower).encode_many(lines),
      "compiled": lambda: compiled(lines),
      "in_graph": graph_path(in_graph),
      "tf_text": graph_path(
          lambda batch: stock.tokenize(batch).merge_dims(1, 2)),
  }
  timings, outputs = {}, {}
  for name, run in paths.items():
    timings[name], outputs[name] = median_seconds(run, args.repeats)

  print(f"{len(lines)} lines, {size / 1e6:.2f} MB, vocab "
        f"{os.path.basename(args.vocab_file)}, do_lower_case={lower}, "
        f"{os.cpu_count()} cores, median of {args.repeats}")
  print(f"{'path':<10} {'seconds':>8} {'MB/s':>7} {'lines/s':>9} "
        f"{'x exact':>8} {'lines differing from exact':>27}")
  for name, seconds in timings.items():
    differing = sum(ours != theirs
                    for ours, theirs in zip(outputs[name], outputs["exact"]))
    print(f"{name:<10} {seconds:>8.3f} {size / 1e6 / seconds:>7.2f} "
          f"{len(lines) / seconds:>9.0f} {timings['exact'] / seconds:>8.1f} "
          f"{differing:>27}")


if __name__ == "__main__":
  main()
