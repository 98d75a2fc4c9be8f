"""What a run script's user sees on stderr, and how long it takes, with
run_scripts/program.py's start-up quieting (TF_CPP_MIN_LOG_LEVEL=3, and the
first `import tensorflow` with TensorFlow's start-up lines dropped from
file descriptor 2) against the plain alternatives in the same run:

  hook     the scripts as they are;
  level_3  TF_CPP_MIN_LOG_LEVEL=3 alone (program.py's import hook removed);
  nothing  neither (TensorFlow's defaults).

Each case runs a script a user runs: --helpshort (refused before
TensorFlow is imported), a refusal after TensorFlow starts, and a short
real run (extract_features on ../shared's tiny original checkpoint). It
prints each route's stderr line count, the start-up lines among them, the
first such lines, and the median seconds with their ratio to `hook`.
TensorFlow 2.20 reads TF_CPP_MIN_LOG_LEVEL before its first line; 2.21
writes some while it is imported, before it reads it. To compare, run it
with each TensorFlow's Python:

    .venv/bin/python benchmarks/start_up_lines.py [--python=<venv>/bin/python]
        [--repeats=3]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

PROJECT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, PROJECT_DIR)
SCRIPTS_DIR = os.path.join(PROJECT_DIR, "run_scripts")
ORIGINAL_TINY = os.path.join(os.path.dirname(PROJECT_DIR), "shared",
                             "reference", "original_tiny")
FIXTURES = os.path.join(PROJECT_DIR, "tests", "fixtures", "extract_features")

# Runs a script as `python <script> <args>` does, after taking program.py's
# import hook out of sys.meta_path and, for "nothing", its setting.
_WITHOUT_HOOK = """
import os, runpy, sys
route, sys.argv = sys.argv[1], sys.argv[2:]
sys.path.insert(0, os.path.dirname(sys.argv[0]))
import program
sys.meta_path[:] = [finder for finder in sys.meta_path
                    if type(finder).__name__ != "_QuietTensorFlowImport"]
if route == "nothing":
  del os.environ["TF_CPP_MIN_LOG_LEVEL"]
runpy.run_path(sys.argv[0], run_name="__main__")
"""
ROUTES = ("hook", "level_3", "nothing")
# A line of TensorFlow's C++ logging in 2.20's or 2.21's format, absl's
# note before them, or the CPU-instructions line's second half.
START_UP_LINE = re.compile(
    r"^(?:\S+ \S+: )?[IWEF]\S* .*\.cc:\d+\] |absl::InitializeLog"
    r"|^To enable the following instructions")


def parse_args():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--python", default=sys.executable,
                      help="the Python (and so the TensorFlow) to run")
  parser.add_argument("--repeats", type=int, default=3)
  return parser.parse_args()


def cases(directory):
  """{name: (script, args)}: what a user runs."""
  output_dir = os.path.join(directory, "swag")
  return {
      "--helpshort": ("run_classifier.py", ["--helpshort"]),
      "refusal": ("run_swag.py", [
          f"--data_dir={directory}", f"--output_dir={output_dir}",
          "--do_train", "--train_batch_size=0"]),
      "real run": ("extract_features.py", [
          f"--input_file={FIXTURES}/input.txt",
          f"--vocab_file={FIXTURES}/vocab.txt",
          f"--bert_config_file={ORIGINAL_TINY}/bert_config.json",
          f"--init_checkpoint={ORIGINAL_TINY}/bert_model.ckpt",
          "--layers=-1", "--max_seq_length=16",
          f"--output_file={directory}/output.jsonl"])}


def run(python, route, script, args):
  """(stderr lines, seconds) of one run of run_scripts/<script>."""
  path = os.path.join(SCRIPTS_DIR, script)
  command = [python, path, *args] if route == "hook" else \
      [python, "-c", _WITHOUT_HOOK, route, path, *args]
  env = {name: value for name, value in os.environ.items()
         if name != "TF_CPP_MIN_LOG_LEVEL"}
  start = time.perf_counter()
  result = subprocess.run(command, capture_output=True, text=True, env=env,
                          check=False)
  return result.stderr.splitlines(), time.perf_counter() - start


def measure(python, script, args, repeats):
  """{route: (stderr lines of the last run, median seconds)}, the routes
  alternating."""
  seconds = {route: [] for route in ROUTES}
  lines = {}
  for _ in range(repeats):
    for route in ROUTES:
      lines[route], took = run(python, route, script, args)
      seconds[route].append(took)
  return {route: (lines[route], statistics.median(seconds[route]))
          for route in ROUTES}


def start_up_lines(lines):
  return [line for line in lines if START_UP_LINE.search(line)]


def tensorflow_version(python):
  return subprocess.run(
      [python, "-c", "import importlib.metadata as m; "
       "print(m.version('tensorflow'))"],
      capture_output=True, text=True, check=True).stdout.strip()


def main():
  args = parse_args()
  import machine  # pylint: disable=import-outside-toplevel
  print(machine.described_in_child())
  print(f"Measured: TensorFlow {tensorflow_version(args.python)} "
        f"({args.python}), median of {args.repeats} runs")
  with tempfile.TemporaryDirectory() as directory:
    for name, (script, script_args) in cases(directory).items():
      results = measure(args.python, script, script_args, args.repeats)
      hook_seconds = results["hook"][1]
      print(f"\n{name}: {script} {' '.join(script_args[-1:])}")
      for route, (lines, seconds) in results.items():
        quiet = start_up_lines(lines)
        print(f"  {route:8} {len(lines):3d} stderr lines, {len(quiet):2d} "
              f"of TensorFlow's start-up; {seconds:5.2f} s "
              f"({seconds / hook_seconds:.2f}x hook)")
        for line in quiet[:3]:
          print(f"           | {line[:100]}")


if __name__ == "__main__":
  main()
