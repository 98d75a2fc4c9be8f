"""The README's first command: the end-to-end demo, shortened."""

import os
import subprocess
import sys

from tests.helpers import PROJECT_DIR


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
