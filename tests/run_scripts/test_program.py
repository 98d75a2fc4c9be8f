"""run_scripts/program.py: how every program starts and stops."""

import re

from tests.support.helpers import run_script

# A line TensorFlow's C++ logging writes: "2026-12-03 12:49:51.897468: I
# external/.../cudart_stub.cc:31] ..." or "W0000 00:00:... loop_optimizer.cc:
# 934] ...".
_TENSORFLOW_LOG_LINE = re.compile(
    r"^(?:\S+ \S+: )?[IWEF]\S* .*\.cc:\d+\] .*$", re.MULTILINE)


def test_tensorflow_start_up_lines_are_silenced_unless_asked_for():
  """A run's stderr is what its user needs: TensorFlow's C++
  start-up lines (no CUDA driver, CPU instructions, oneDNN) only with
  --verbosity or TF_CPP_MIN_LOG_LEVEL. Machines without a GPU (CI's, this
  one) always print some. TensorFlow 2.21 writes its "Could not find cuda
  drivers" line before it reads the setting, so that one line stays."""
  flag_values = {"helpshort": True}  # TensorFlow is imported, then help
  quiet = run_script("run_swag.py", flag_values)
  verbose = run_script("run_swag.py", {**flag_values, "verbosity": 1})
  chosen = run_script("run_swag.py", flag_values,
                      env={"TF_CPP_MIN_LOG_LEVEL": "0"})
  for result in (quiet, verbose, chosen):
    assert "--output_dir" in result.stdout, result.stderr[-3000:]
  quiet_lines = _TENSORFLOW_LOG_LINE.findall(quiet.stderr)
  assert all("cudart_stub.cc" in line for line in quiet_lines), quiet.stderr
  for result in (verbose, chosen):
    assert len(_TENSORFLOW_LOG_LINE.findall(result.stderr)) > \
        len(quiet_lines), result.stderr
