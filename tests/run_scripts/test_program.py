"""run_scripts/program.py: how every program starts and stops."""

import os
import subprocess
import sys
import time

import pytest

from tests.support.helpers import PROJECT_DIR


# How a program exits: Python's, the same on every TensorFlow; one leg of CI
# runs it.
@pytest.mark.rerun
def test_a_finished_run_exits_without_collecting():
  """Once main returns, the collector is frozen, so that exiting does not
  walk every object TensorFlow made (about a second per run)."""
  script = ("import atexit, gc, sys\n"
            "sys.path.insert(0, 'run_scripts')\n"
            "import program\n"
            "atexit.register(lambda: print(gc.get_freeze_count() > 0))\n"
            "program.run(lambda argv: None)\n")
  result = subprocess.run([sys.executable, "-c", script], cwd=PROJECT_DIR,
                          capture_output=True, text=True, check=False)
  assert (result.returncode, result.stdout) == (0, "True\n"), result.stderr


# A program that writes an output while a worker process works for a
# minute; it prints the worker's pid once both are under way.
_WRITING_WITH_A_WORKER = """
import concurrent.futures, multiprocessing, os, sys, time
sys.path[:0] = [{project!r}, {project!r} + "/run_scripts"]
import program
from bert_tf.files import atomic_outputs

def main(argv):
  with atomic_outputs.atomic_write(argv[1]) as writer:
    writer.write("half")
    with concurrent.futures.ProcessPoolExecutor(
        1, mp_context=multiprocessing.get_context("fork")) as pool:
      print(pool.submit(os.getpid).result(), flush=True)
      pool.submit(time.sleep, 60).result()

program.run(main)
"""


def _gone(pid):
  """Whether process `pid` has ended (a zombie that no one reaps counts)."""
  try:
    with open(f"/proc/{pid}/stat") as reader:
      return reader.read().rpartition(")")[2].split()[0] == "Z"
  except FileNotFoundError:
    return True


# What a killed or interrupted run leaves: Python's, the same on every
# TensorFlow; one leg of CI runs it.
@pytest.mark.rerun
def test_sigterm_ends_a_program_in_one_line_with_its_temporaries_removed(
    tmp_path):
  """kill (SIGTERM) unwinds as Ctrl-C does: the held temporary is removed,
  the worker process dies at once instead of finishing its work, one line,
  exit status 143 as a shell reports it."""
  script = tmp_path / "writer.py"
  script.write_text(_WRITING_WITH_A_WORKER.format(project=PROJECT_DIR))
  output = tmp_path / "out" / "result.txt"
  process = subprocess.Popen([sys.executable, str(script), str(output)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
  worker = int(process.stdout.readline())
  assert [name for name in os.listdir(output.parent) if ".tmp-" in name]
  process.terminate()
  _, stderr = process.communicate(timeout=30)
  assert (process.returncode, stderr) == (
      143, "writer: terminated; no output was half written\n")
  assert os.listdir(output.parent) == []
  deadline = time.time() + 10
  while not _gone(worker):
    assert time.time() < deadline, f"worker {worker} outlived its program"
    time.sleep(0.01)
