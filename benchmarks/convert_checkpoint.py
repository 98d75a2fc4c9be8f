"""Converting a BERT-Large-sized checkpoint either way: seconds and peak
memory of run_scripts/convert_checkpoint.py, each as a whole process, against
the same run's reference: a process that only reads every tensor of the
checkpoint with TensorFlow (what any TF converter must do) and a plain copy
of its files.

    .venv/bin/python benchmarks/convert_checkpoint.py [--rounds=3]

The checkpoint (random weights in BERT-Large's shapes, with its pretraining
heads: 336M parameters, 1.34 GB) is written into a temporary directory at
run time and removed at the end.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import machine

PROJECT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, PROJECT_DIR)

LARGE = {"vocab_size": 30522, "hidden_size": 1024, "num_hidden_layers": 24,
         "num_attention_heads": 16, "intermediate_size": 4096,
         "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
         "attention_probs_dropout_prob": 0.1, "max_position_embeddings": 512,
         "type_vocab_size": 2, "initializer_range": 0.02}

_READ_ALL = """
import sys, tensorflow as tf
reader = tf.train.load_checkpoint(sys.argv[1])
for name in reader.get_variable_to_shape_map():
  reader.get_tensor(name)
"""


def write_large_checkpoint(directory):
  """bert_config.json, vocab.txt and bert_model.ckpt of BERT-Large's
  shapes; returns the checkpoint's size in bytes."""
  from bert_tf.checkpoints import huggingface, names
  from bert_tf.checkpoints.original import checkpoint_writer
  from bert_tf.config import BertConfig  # pylint: disable=import-outside-toplevel
  config = BertConfig.from_dict(LARGE)
  os.makedirs(directory)
  with open(os.path.join(directory, "bert_config.json"), "w") as writer:
    writer.write(config.to_json_string())
  special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
  with open(os.path.join(directory, "vocab.txt"), "w") as writer:
    writer.write("".join(f"{token}\n" for token in special + [
        f"[unused{index}]" for index in range(config.vocab_size - 5)]))
  architecture = huggingface.ARCHITECTURES["BertForPreTraining"]
  generator = np.random.default_rng(0)
  tensors = {
      name: generator.standard_normal(
          names.expected_shape(config, name, 2), np.float32) * 0.02
      for name in huggingface.original_names(config, architecture)}
  tensors[names.GLOBAL_STEP] = np.int64(0)
  checkpoint_writer.write_checkpoint(os.path.join(directory, "bert_model.ckpt"),
                               tensors)
  return sum(value.nbytes for value in tensors.values())


def measured(command):
  """(seconds, peak resident memory in bytes) of a whole process."""
  start = time.perf_counter()
  process = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
  _, status, usage = os.wait4(process.pid, 0)
  seconds = time.perf_counter() - start
  if os.waitstatus_to_exitcode(status) != 0:
    raise RuntimeError(f"{command} failed: {process.stderr.read()[-2000:]}")
  process.stderr.close()
  return seconds, usage.ru_maxrss * 1024


def measured_alternately(runs, rounds):
  """{name: [(seconds, peak bytes) of command(round) for each round]} for
  runs {name: command(round)}, the runs alternating, so drift hits all
  alike."""
  results = {name: [] for name in runs}
  for round_ in range(rounds):
    for name, command in runs.items():
      results[name].append(measured(command(round_)))
  return results


def medians(results):
  """{name: (median seconds, median peak bytes)} of measured_alternately's
  results."""
  return {name: (statistics.median(run[0] for run in runs),
                 statistics.median(run[1] for run in runs))
          for name, runs in results.items()}


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--rounds", type=int, default=3)
  parser.add_argument("--write_checkpoint", help=argparse.SUPPRESS)
  args = parser.parse_args()
  print(machine.described_in_child(), flush=True)
  if args.write_checkpoint:
    print(write_large_checkpoint(args.write_checkpoint))
    return
  work = tempfile.mkdtemp(prefix="convert_benchmark_")
  try:
    original = os.path.join(work, "original")
    # In a process of its own: a child's peak memory counts the pages it
    # shares with this process when forked, so this one stays small.
    size = int(subprocess.run(
        [sys.executable, __file__, f"--write_checkpoint={original}"],
        capture_output=True, text=True, check=True).stdout.split()[-1])
    convert = [sys.executable,
               os.path.join(PROJECT_DIR, "run_scripts", "convert_checkpoint.py")]
    runs = {
        "read every tensor (TensorFlow)": lambda _: [
            sys.executable, "-c", _READ_ALL,
            os.path.join(original, "bert_model.ckpt")],
        "python -c pass (the floor)": lambda _: [sys.executable, "-c",
                                                 "pass"],
        "copy the files (cp -r)": lambda index: [
            "cp", "-r", original, os.path.join(work, f"copy{index}")],
        "original -> huggingface": lambda index: [
            *convert, f"--input_dir={original}",
            f"--output_dir={work}/hf{index}", "--output_format=huggingface"],
        "huggingface -> original": lambda index: [
            *convert, f"--input_dir={work}/hf{index}",
            f"--output_dir={work}/back{index}", "--output_format=original"],
    }
    results = measured_alternately(runs, args.rounds)
    reference = statistics.median(
        seconds for seconds, _ in results["read every tensor (TensorFlow)"])
    report = {"checkpoint_bytes": size, "rounds": args.rounds, "runs": {}}
    for name, values in results.items():
      seconds = statistics.median(value[0] for value in values)
      peak = max(value[1] for value in values)
      report["runs"][name] = {
          "median_seconds": round(seconds, 2),
          "seconds_vs_reading": round(seconds / reference, 2),
          "peak_memory_gb": round(peak / 1e9, 2),
          "peak_memory_vs_checkpoint": round(peak / size, 2)}
    print(json.dumps(report, indent=2))
  finally:
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
  main()
