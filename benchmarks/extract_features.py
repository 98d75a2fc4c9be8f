"""extract_features: lines per second, bert_tf against the original.

Both sides read the same lines, with the same flags, and a checkpoint of
the same config (random weights in the released format, written here),
each in its own process as a user runs it: google-research/bert's
extract_features.py under tensorflow.compat.v1 (tests/
original_extract_features.py; from a checkout you pass with
--original_dir, nothing of it kept here), and run_scripts/
extract_features.py writing the JSONL, then the npz. Prints each run's
seconds (the whole process) and lines/sec, the ratios, the files' sizes,
and how far the two JSONL files are apart: tokens, the largest value
difference, lines byte for byte the same. Then the output stage alone, in
this process on the same values: printing lines (bert_tf against the
original's loop, tests/support/original_extract_features.originals_line,
on the first --print_lines lines), and bert_tf writing all of them as JSONL
and as npz.

    .venv/bin/python benchmarks/extract_features.py \\
        --original_dir=/path/to/google-research/bert [--num_lines=2000] \\
        [--num_hidden_layers=4 --hidden_size=512] [--max_seq_length=128]

The lines are ../shared's GLUE dev sentences and pairs (SST-2 and CoLA
sentences; MRPC and RTE pairs as "a ||| b"), in turn, up to --num_lines.
"""

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

PROJECT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, PROJECT_DIR)
SHARED_DIR = os.path.join(os.path.dirname(PROJECT_DIR), "shared")

# pylint: disable=g-import-not-at-top,wrong-import-position
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import bert_tf
import machine
from bert_tf.extraction import output_files
from bert_tf.extraction.jsonl import jsonl_line
from bert_tf.tasks.glue import examples as glue
from tests.support.original_extract_features import originals_line

_GLUE_DEV = ("SST-2", "CoLA", "MRPC", "RTE")
_ORIGINAL = """
import json, sys
sys.path.insert(0, sys.argv[1])
from tests.support.original_extract_features import run_original
run_original(sys.argv[2], json.loads(sys.argv[3]))
"""


def parse_args():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--original_dir", required=True,
                      help="a checkout of google-research/bert")
  parser.add_argument("--num_lines", type=int, default=2000)
  parser.add_argument("--vocab_file", default=os.path.join(
      SHARED_DIR, "vocab", "bert-base-uncased-vocab.txt"))
  parser.add_argument("--num_hidden_layers", type=int, default=4)
  parser.add_argument("--hidden_size", type=int, default=512)
  parser.add_argument("--layers", default="-1,-2,-3,-4")
  parser.add_argument("--max_seq_length", type=int, default=128)
  parser.add_argument("--batch_size", type=int, default=32)
  parser.add_argument("--print_lines", type=int, default=200,
                      help="lines the printing comparison prints")
  return parser.parse_args()


def write_lines(path, count):
  """GLUE dev examples, one per line, taken from each file in turn."""
  readers = [iter(glue.read_examples(glue.get_task(name), os.path.join(
      SHARED_DIR, "data", "glue", name), "dev")) for name in _GLUE_DEV]
  lines = [example.text_a if example.text_b is None
           else f"{example.text_a} ||| {example.text_b}"
           for example in itertools.chain.from_iterable(
               itertools.zip_longest(*readers)) if example is not None]
  with open(path, "w", encoding="utf-8") as writer:
    writer.writelines(line + "\n" for line in
                      itertools.islice(itertools.cycle(lines), count))


def write_checkpoint(args, directory):
  """A random-weight encoder of the asked size: (config file, checkpoint)."""
  with open(args.vocab_file, encoding="utf-8") as reader:
    vocab_size = sum(1 for _ in reader)
  config = bert_tf.BertConfig(
      vocab_size=vocab_size, hidden_size=args.hidden_size,
      num_hidden_layers=args.num_hidden_layers,
      num_attention_heads=max(args.hidden_size // 64, 1),
      intermediate_size=4 * args.hidden_size,
      max_position_embeddings=max(512, args.max_seq_length))
  config_file = os.path.join(directory, "bert_config.json")
  with open(config_file, "w", encoding="utf-8") as writer:
    writer.write(config.to_json_string())
  checkpoint = os.path.join(directory, "bert_model.ckpt")
  bert_tf.save_checkpoint(bert_tf.BertEncoder(config), checkpoint)
  return config_file, checkpoint


def timed(command):
  """Seconds the command's process took; exits if it fails."""
  start = time.perf_counter()
  result = subprocess.run(command, capture_output=True, text=True,
                          check=False)
  if result.returncode != 0:
    sys.exit(f"{command[:3]} failed:\n{result.stderr[-3000:]}")
  return time.perf_counter() - start


def compare_jsonl(theirs, ours):
  """(tokens identical, largest value difference, lines identical)."""
  same_tokens, largest, same_lines = True, 0.0, 0
  with open(theirs, encoding="utf-8") as original, \
      open(ours, encoding="utf-8") as mine:
    for their_line, my_line in itertools.zip_longest(original, mine):
      if their_line is None or my_line is None:
        return False, float("inf"), same_lines
      same_lines += their_line == my_line
      their_record, my_record = json.loads(their_line), json.loads(my_line)
      same_tokens &= ([f["token"] for f in their_record["features"]]
                      == [f["token"] for f in my_record["features"]])
      if same_tokens:
        largest = max(largest, float(np.abs(
            np.array([[layer["values"] for layer in f["layers"]]
                      for f in their_record["features"]])
            - np.array([[layer["values"] for layer in f["layers"]]
                        for f in my_record["features"]])).max()))
  return same_tokens, largest, same_lines


def time_outputs(npz_file, layers, directory, print_lines):
  """Seconds to print the first print_lines lines of the npz's values (the
  original's loop and bert_tf's, checked equal), and to write them all as
  JSONL and as npz."""
  with np.load(npz_file) as arrays:
    values, lengths = arrays["values"], arrays["lengths"]
    tokens = arrays["tokens"].tolist()
  ends = np.cumsum(lengths).tolist()
  lines = [(tokens[end - length:end],
            values[end - length:end].transpose(1, 0, 2))
           for end, length in zip(ends, lengths.tolist())]
  seconds, printed = {}, {}
  for name, print_line in (("original_print", originals_line),
                           ("print", jsonl_line)):
    start = time.perf_counter()
    printed[name] = [print_line(index, line_tokens, layers, line_values)
                     for index, (line_tokens, line_values)
                     in enumerate(lines[:print_lines])]
    seconds[name] = time.perf_counter() - start
  if printed["original_print"] != printed["print"]:
    sys.exit("bert_tf's printed lines differ from the original loop's")
  for name, write in (
      ("jsonl", lambda path: output_files.write_jsonl(
          path, lines, layers)),
      ("npz", lambda path: output_files.write_npz(
          path, lines, layers, len(tokens), values.shape[-1]))):
    start = time.perf_counter()
    write(os.path.join(directory, f"stage.{name}"))
    seconds[name] = time.perf_counter() - start
  return seconds


def main():
  args = parse_args()
  print(machine.described_in_child(), flush=True)
  with tempfile.TemporaryDirectory() as directory:
    input_file = os.path.join(directory, "input.txt")
    write_lines(input_file, args.num_lines)
    config_file, checkpoint = write_checkpoint(args, directory)
    flags = [f"--input_file={input_file}", f"--vocab_file={args.vocab_file}",
             f"--bert_config_file={config_file}",
             f"--init_checkpoint={checkpoint}", f"--layers={args.layers}",
             f"--max_seq_length={args.max_seq_length}",
             f"--batch_size={args.batch_size}"]
    outputs = {side: os.path.join(directory, name) for side, name in (
        ("original", "original.jsonl"), ("jsonl", "ours.jsonl"),
        ("npz", "ours.npz"))}
    script = os.path.join(PROJECT_DIR, "run_scripts", "extract_features.py")
    seconds = {
        "original": timed([sys.executable, "-c", _ORIGINAL, PROJECT_DIR,
                           os.path.abspath(args.original_dir), json.dumps(
                               [*flags,
                                f"--output_file={outputs['original']}"])]),
        "jsonl": timed([sys.executable, script, *flags,
                        f"--output_file={outputs['jsonl']}"]),
        "npz": timed([sys.executable, script, *flags,
                      f"--output_file={outputs['npz']}",
                      "--output_format=npz"])}
    sizes = {side: os.path.getsize(path) for side, path in outputs.items()}
    same_tokens, largest, same_lines = compare_jsonl(outputs["original"],
                                                     outputs["jsonl"])
    stage = time_outputs(outputs["npz"], [int(layer) for layer in
                                          args.layers.split(",")], directory,
                         args.print_lines)
  print(f"{args.num_lines} lines of GLUE dev text; L={args.num_hidden_layers} "
        f"H={args.hidden_size}, layers {args.layers}, max_seq_length "
        f"{args.max_seq_length}, batch {args.batch_size}; whole processes")
  print(f"{'run':<16} {'seconds':>8} {'lines/s':>8} {'vs original':>12} "
        f"{'MB':>9}")
  for side, label in (("original", "original jsonl"), ("jsonl",
                                                        "bert_tf jsonl"),
                      ("npz", "bert_tf npz")):
    print(f"{label:<16} {seconds[side]:>8.1f} "
          f"{args.num_lines / seconds[side]:>8.1f} "
          f"{seconds['original'] / seconds[side]:>11.1f}x "
          f"{sizes[side] / 1e6:>9.1f}")
  print(f"npz against bert_tf's jsonl: {seconds['jsonl'] / seconds['npz']:.1f}x "
        f"faster, {sizes['jsonl'] / sizes['npz']:.1f}x smaller")
  print(f"printing {args.print_lines} lines: original's loop "
        f"{stage['original_print']:.2f} s, bert_tf {stage['print']:.2f} s "
        f"({stage['original_print'] / stage['print']:.1f}x, the same text)")
  print(f"writing every line: jsonl {stage['jsonl']:.1f} s, npz "
        f"{stage['npz']:.1f} s ({stage['jsonl'] / stage['npz']:.1f}x)")
  print(f"JSONL: tokens {'identical' if same_tokens else 'DIFFERENT'}, "
        f"largest value difference {largest:.2g}, {same_lines}/"
        f"{args.num_lines} lines byte for byte the same")


if __name__ == "__main__":
  main()
