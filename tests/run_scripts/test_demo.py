"""The README's first command: the end-to-end demo, shortened."""

import os
import subprocess
import sys

import pytest

from tests.support.helpers import PROJECT_DIR


@pytest.mark.rerun
def test_demo_runs_every_stage_to_a_served_model(tmp_path):
  result = subprocess.run(
      [sys.executable, os.path.join(PROJECT_DIR, "run_scripts", "demo.py"),
       f"--output_dir={tmp_path}", "--pretraining_steps=20",
       "--num_train_epochs=1"],
      capture_output=True, text=True, timeout=600, check=False)
  assert result.returncode == 0, result.stderr
  for stage in range(1, 8):
    assert f"[{stage}] " in result.stdout
  for produced in ("corpus.txt", "vocab.txt", "pretraining_data.tfrecord",
                   "pretraining/model.ckpt-20.index",
                   "pretraining/eval_results.txt", "topic_task/train.tsv",
                   "classifier/eval_results.txt", "classifier/SST-2.tsv",
                   "export/1/saved_model.pb"):
    assert (tmp_path / produced).exists(), produced
  assert "signatures ['serve_text', 'serving_default']" in result.stdout
  assert "'Wait until the child process terminates.' -> " in result.stdout
  assert "All stages done" in result.stdout


# Refused before any work, in one line: Python's checks, the same on every
# TensorFlow; one leg of CI runs it.
@pytest.mark.rerun
def test_an_output_dir_that_is_a_file_is_refused_at_once(tmp_path):
  taken = tmp_path / "notes.txt"
  taken.write_text("the user's")
  result = subprocess.run(
      [sys.executable, os.path.join(PROJECT_DIR, "run_scripts", "demo.py"),
       f"--output_dir={taken}"], capture_output=True, text=True, timeout=120,
      check=False)
  assert result.returncode == 1
  assert result.stderr.strip() == (f"demo: --output_dir={taken} is a file, "
                                   f"not a directory")
  assert taken.read_text() == "the user's"
