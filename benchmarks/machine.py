"""The machine a benchmark runs on, as lines to print beside its figures:
the CPU's model and cores, the units its bfloat16 and int8 products can
run on, and TensorFlow's version.

    .venv/bin/python benchmarks/machine.py

Run as a script it prints them from a process of its own: describing them
imports TensorFlow, which a benchmark that measures its children's peak
memory keeps out of its own process (a child's peak counts its parent's).
"""

import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

# The /proc/cpuinfo flags of units that compute int8 products: what
# onnxruntime's and OpenVINO's int8 kernels run on.
INT8_FLAGS = ("amx_int8", "avx512_vnni", "avx_vnni")


def cpu_model(cpuinfo="/proc/cpuinfo"):
  """The CPU's model name as Linux gives it; None where it does not."""
  try:
    with open(cpuinfo, encoding="utf-8") as reader:
      found = re.search(r"^model name\s*:(.*)$", reader.read(), re.MULTILINE)
  except OSError:
    return None
  return found and found.group(1).strip()


def describe():
  """Lines that say what a benchmark ran on."""
  # pylint: disable=import-outside-toplevel
  import tensorflow as tf
  from bert_tf.optimization import precision
  flags = precision.cpu_flags()
  if flags is None:
    units = "the system lists no CPU features"
  else:
    int8 = [flag for flag in INT8_FLAGS if flag in flags]
    units = (f"bfloat16 units: "
             f"{', '.join(precision.bfloat16_units(flags)) or 'none'}; "
             f"int8 units: {', '.join(int8) or 'none'}")
  return [f"CPU: {cpu_model() or 'model not listed'}, {os.cpu_count()} "
          f"cores; {units}", f"TensorFlow {tf.__version__}"]


def described_in_child():
  """describe()'s lines, from a process of its own (it imports
  TensorFlow, and a child's peak memory would count this process's)."""
  return subprocess.run([sys.executable, os.path.abspath(__file__)],
                        capture_output=True, text=True,
                        check=True).stdout.rstrip()


if __name__ == "__main__":
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
  print("\n".join(describe()))
