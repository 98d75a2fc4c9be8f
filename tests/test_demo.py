import os
import subprocess
import sys

from tests.helpers import PROJECT_DIR


def test_demo_runs_and_reloads_its_checkpoint(tmp_path):
  result = subprocess.run(
      [sys.executable, os.path.join(PROJECT_DIR, "run_scripts", "demo.py"),
       f"--output_dir={tmp_path}"],
      capture_output=True, text=True, timeout=300, check=False)
  assert result.returncode == 0, result.stderr
  assert "masked: 'new'" in result.stdout
  assert "reloaded max difference: 0.0" in result.stdout
  assert sorted(os.listdir(tmp_path)) == [
      "bert_config.json", "bert_model.ckpt.data-00000-of-00001",
      "bert_model.ckpt.index", "vocab.txt"]
