"""extract_features' JSONL printer (bert_tf/extraction/jsonl.py, digits
from uint64 tables) against the plain route that writes the same bytes
(json.dumps of the values rounded in numpy, jsonl._json_line), and the
original's loop (json.dumps of round(float(x), 6), one value at a time).

First printing alone: --print_lines lines of 4 layers x 128 tokens x 768
float32 values (normal, sd 0.5), the routes alternating line by line,
checked byte for byte equal. Then whole extract_features processes, as a
user runs them (BERT-Base size, random weights, ../shared's GLUE dev lines
through benchmarks/extract_features.py's helpers, layers -1..-4): as
shipped against the plain printer swapped in, alternating, their outputs
checked byte for byte equal. Prints seconds and ratios.

    .venv/bin/python benchmarks/jsonl_printer.py [--print_lines=100]
        [--num_lines=300] [--repeats=2]
"""

import argparse
import filecmp
import os
import statistics
import sys
import tempfile
import time

import numpy as np

# pylint: disable=wrong-import-position
import extract_features as whole_runs
import machine
from bert_tf.extraction import jsonl
from tests.support.original_extract_features import originals_line

LAYERS = [-1, -2, -3, -4]
# Runs run_scripts/extract_features.py with the plain printer.
_PLAIN = """
import os, runpy, sys
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(sys.argv[0]))
import program
from bert_tf.extraction import jsonl, output_files
output_files.jsonl_line = lambda index, tokens, layers, values: \\
    jsonl._json_line(index, tokens, layers, values.transpose(1, 0, 2))
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def parse_args():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--print_lines", type=int, default=100)
  parser.add_argument("--num_lines", type=int, default=300)
  parser.add_argument("--repeats", type=int, default=2)
  parser.add_argument("--vocab_file", default=os.path.join(
      whole_runs.SHARED_DIR, "vocab", "bert-base-uncased-vocab.txt"))
  return parser.parse_args()


def plain_line(linex_index, tokens, layer_indexes, layer_values):
  """jsonl_line's bytes by json: values rounded in numpy, printed by
  json.dumps."""
  return jsonl._json_line(linex_index, tokens, layer_indexes,
                          layer_values.transpose(1, 0, 2))


def time_printing(count):
  """{route: median seconds per line}, lines checked equal."""
  rng = np.random.default_rng(0)
  tokens = [f"token{index}" for index in range(128)]
  routes = {"tables": jsonl.jsonl_line, "json": plain_line,
            "original": originals_line}
  jsonl.jsonl_line(0, tokens[:1], LAYERS, np.zeros((4, 1, 768), np.float32))
  seconds = {name: [] for name in routes}
  for index in range(count):
    values = (rng.standard_normal((4, 128, 768)) * 0.5).astype(np.float32)
    printed = set()
    for name, print_line in routes.items():
      start = time.perf_counter()
      printed.add(print_line(index, tokens, LAYERS, values))
      seconds[name].append(time.perf_counter() - start)
    if len(printed) != 1:
      sys.exit(f"line {index}: the routes print different bytes")
  return {name: statistics.median(times) for name, times in seconds.items()}


def time_runs(args, directory):
  """{route: median seconds of the whole process}, outputs checked equal."""
  input_file = os.path.join(directory, "input.txt")
  whole_runs.write_lines(input_file, args.num_lines)
  config_file, checkpoint = whole_runs.write_checkpoint(argparse.Namespace(
      vocab_file=args.vocab_file, hidden_size=768, num_hidden_layers=12,
      max_seq_length=128), directory)
  script = os.path.join(whole_runs.PROJECT_DIR, "run_scripts",
                        "extract_features.py")
  flags = [f"--input_file={input_file}", f"--vocab_file={args.vocab_file}",
           f"--bert_config_file={config_file}",
           f"--init_checkpoint={checkpoint}",
           f"--layers={','.join(map(str, LAYERS))}"]
  commands = {"tables": [sys.executable, script],
              "json": [sys.executable, "-c", _PLAIN, script]}
  seconds = {name: [] for name in commands}
  for _ in range(args.repeats):
    for name, command in commands.items():
      output = os.path.join(directory, f"{name}.jsonl")
      seconds[name].append(whole_runs.timed(
          [*command, *flags, f"--output_file={output}"]))
  if not filecmp.cmp(os.path.join(directory, "tables.jsonl"),
                     os.path.join(directory, "json.jsonl"), shallow=False):
    sys.exit("the two runs' JSONL files differ")
  return {name: statistics.median(times) for name, times in seconds.items()}


def main():
  args = parse_args()
  print(machine.described_in_child(), flush=True)
  printing = time_printing(args.print_lines)
  print(f"\nPrinting alone, {args.print_lines} lines of 4 x 128 x 768 "
        "values, byte for byte equal; seconds per line (median):")
  for name, seconds in printing.items():
    print(f"  {name:8} {seconds:.4f} s  "
          f"({seconds / printing['tables']:.2f}x tables)")
  with tempfile.TemporaryDirectory() as directory:
    runs = time_runs(args, directory)
  print(f"\nextract_features, BERT-Base, {args.num_lines} GLUE dev lines, "
        f"layers -1..-4, same JSONL; whole process, median of "
        f"{args.repeats}:")
  for name, seconds in runs.items():
    print(f"  {name:8} {seconds:.1f} s  ({seconds / runs['tables']:.2f}x "
          "tables)")


if __name__ == "__main__":
  main()
