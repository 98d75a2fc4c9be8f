"""benchmarks/start_up_lines.py: what it counts as TensorFlow's start-up
is each line that TensorFlow 2.20 and 2.21 write while starting (as
tests/run_scripts/test_start_up.py silences them), and no line of the
program's own; a script run without program.py's import hook keeps the
program's answer."""

import os

import pytest

from tests.support.helpers import PROJECT_DIR

# Lines as TensorFlow 2.20 and 2.21 write them on a CPU-only machine.
START_UP = [
    "2026-12-06 07:09:55.346608: I external/local_xla/xla/tsl/cuda/"
    "cudart_stub.cc:31] Could not find cuda drivers on your machine, GPU "
    "will not be used.",
    "To enable the following instructions: AVX2 AVX512F FMA, in other "
    "operations, rebuild TensorFlow with the appropriate compiler flags.",
    "WARNING: All log messages before absl::InitializeLog() is called are "
    "written to STDERR",
    "I0000 00:00:1796541023.909470   32226 port.cc:153] oneDNN custom "
    "operations are on.",
    "E0000 00:00:1796541060.458497   32583 cuda_platform.cc:52] failed call "
    "to cuInit: INTERNAL: CUDA error"]
OWN = ["run_swag: --train_batch_size=0: must be at least 1",
       "I1206 07:10:02.123456 140000 extraction.py:120] Wrote 3 lines",
       "UserWarning: bfloat16 is emulated on this CPU"]


@pytest.fixture(name="start_up_lines")
def benchmark_module(monkeypatch):
  monkeypatch.syspath_prepend(os.path.join(PROJECT_DIR, "benchmarks"))
  import start_up_lines  # pylint: disable=import-outside-toplevel
  return start_up_lines


def test_start_up_lines_are_tensorflows_alone(start_up_lines):
  assert start_up_lines.start_up_lines(START_UP + OWN) == START_UP


@pytest.mark.parametrize("route", ["level_3", "nothing"])
def test_a_script_without_the_hook_still_answers(start_up_lines, route):
  lines, _ = start_up_lines.run(
      start_up_lines.sys.executable, route, "run_pretraining.py",
      ["--input_file=x", "--output_dir=y", "--iterations_per_loop=0"])
  assert lines == ["run_pretraining: --iterations_per_loop=0: must be at "
                   "least 1"]
