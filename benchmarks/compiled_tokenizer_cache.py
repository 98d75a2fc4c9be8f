"""encode_batch as bert_tf runs it (bert_tf/text/batch_encoding.py: each
batch of _COMPILE_MIN_CHARS characters or more builds its own
CompiledEncoder, a smaller one takes the Python path) against it with a
cache of compiled tokenizers (a WeakKeyDictionary keeping each
FullTokenizer's CompiledEncoder once built, and sending every later batch
of that tokenizer through it), in the same run, the routes alternating.

Two cases: a fine-tuning run's features (text_inputs.encode_texts of a pair
task's train split, each side over the threshold, then its dev and test
splits), and small batches (32 texts) after a large one, which the cache
sends through the compiled path instead of Python. The texts are ../shared's
GLUE sentences (SST-2 train, QNLI), cycled until each train side holds
--train_chars characters. Prints median seconds, ratios, and checks the
ids equal.

    .venv/bin/python benchmarks/compiled_tokenizer_cache.py \\
        [--train_chars=4500000] [--repeats=3]
"""

import argparse
import itertools
import os
import statistics
import sys
import time
import weakref

PROJECT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, PROJECT_DIR)
GLUE_DIR = os.path.join(os.path.dirname(PROJECT_DIR), "shared", "data",
                        "glue")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# pylint: disable=wrong-import-position
import machine
from bert_tf import tokenization
from bert_tf.data.text_inputs import encode_texts
from bert_tf.tasks.glue import examples as glue
from bert_tf.text import batch_encoding

ROUTES = ("plain", "cache")
SMALL_BATCH = 32


def parse_args():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--train_chars", type=int, default=4_500_000)
  parser.add_argument("--repeats", type=int, default=3)
  parser.add_argument("--vocab_file", default=os.path.join(
      os.path.dirname(GLUE_DIR), "..", "vocab",
      "bert-base-uncased-vocab.txt"))
  return parser.parse_args()


def sentences(task, split):
  rows = glue.read_examples(glue.get_task(task),
                            os.path.join(GLUE_DIR, task), split)
  return [text for row in rows for text in (row.text_a, row.text_b) if text]


def filled(texts, chars):
  """texts cycled until they hold `chars` characters."""
  out, total = [], 0
  for text in itertools.cycle(texts):
    if total >= chars:
      return out
    out.append(text)
    total += len(text)


def splits(train_chars):
  """[(texts_a, texts_b)]: a pair task's train, dev and test splits."""
  corpus = sentences("SST-2", "train") + sentences("QNLI", "dev")
  train = filled(corpus, 2 * train_chars)
  dev, test = sentences("QNLI", "dev"), sentences("QNLI", "test")
  return [(train[0::2], train[1::2]), (dev[0::2], dev[1::2]),
          (test[0::2], test[1::2])]


def cached_encode_batch():
  """encode_batch with a cache: a tokenizer's CompiledEncoder kept once
  built, and every later batch of that tokenizer sent through it."""
  kept = weakref.WeakKeyDictionary()

  def encode_batch(tokenizer, texts):
    texts = list(texts)
    if tokenizer not in kept and sum(map(len, texts)) < \
        batch_encoding._COMPILE_MIN_CHARS:  # pylint: disable=protected-access
      return tokenizer.encode_many(texts)
    if tokenizer not in kept:
      kept[tokenizer] = batch_encoding.CompiledEncoder(tokenizer)
    return kept[tokenizer](texts)
  return encode_batch


def timed(route, run):
  """(seconds, result) of run(), encode_texts encoding by the route."""
  text_inputs = sys.modules[encode_texts.__module__]
  if route == "cache":
    text_inputs.encode_batch = cached_encode_batch()
  try:
    start = time.perf_counter()
    result = run()
    return time.perf_counter() - start, result
  finally:
    text_inputs.encode_batch = batch_encoding.encode_batch


def compare(name, run, repeats):
  """Times run under each route, alternating; prints medians and ratio."""
  seconds = {route: [] for route in ROUTES}
  results = {}
  for _ in range(repeats):
    for route in ROUTES:
      took, results[route] = timed(route, run)
      seconds[route].append(took)
  same = _equal(results["plain"], results["cache"])
  medians = {route: statistics.median(times)
             for route, times in seconds.items()}
  print(f"\n{name} (ids equal: {same})")
  for route, median in medians.items():
    print(f"  {route:8} {median:7.3f} s  ({median / medians['plain']:.2f}x "
          "plain)")


def _equal(one, other):
  return all((a[name] == b[name]).all() for a, b in zip(one, other)
             for name in a)


def main():
  args = parse_args()
  print(machine.described_in_child(), flush=True)
  tokenizer = tokenization.FullTokenizer(args.vocab_file, True)
  pairs = splits(args.train_chars)
  print(f"train: {len(pairs[0][0])} pairs, "
        f"{sum(map(len, pairs[0][0])):,} + {sum(map(len, pairs[0][1])):,} "
        f"characters; dev {len(pairs[1][0])}, test {len(pairs[2][0])} pairs; "
        f"compiled from {batch_encoding._COMPILE_MIN_CHARS:,} characters")  # pylint: disable=protected-access
  compare("a run's features: train, dev and test pairs (encode_texts)",
          lambda: [encode_texts(tokenizer, a, b) for a, b in pairs],
          args.repeats)
  small = [pairs[1][0][start:start + SMALL_BATCH]
           for start in range(0, len(pairs[1][0]), SMALL_BATCH)]
  compare(f"train, then dev in batches of {SMALL_BATCH} (encode_texts)",
          lambda: [encode_texts(tokenizer, pairs[0][0])] + [
              encode_texts(tokenizer, batch) for batch in small],
          args.repeats)


if __name__ == "__main__":
  main()
