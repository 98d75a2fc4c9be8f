import os
import subprocess
import sys

import pytest

from tests.helpers import PROJECT_DIR, SHARED_DIR

SCRIPT = os.path.join(PROJECT_DIR, "run_scripts", "inspect_tfrecords.py")
RECORDS = os.path.join(SHARED_DIR, "reference", "create_pretraining_data",
                       "whole_word.tfrecord")
VOCAB = os.path.join(SHARED_DIR, "vocab", "bert-base-uncased-vocab.txt")


def inspect(*flags):
  return subprocess.run([sys.executable, SCRIPT, f"--input_file={RECORDS}",
                         *flags], capture_output=True, text=True, timeout=300,
                        check=False)


@pytest.mark.shared
def test_prints_tokens_masks_and_label_and_checks_every_record():
  result = inspect(f"--vocab_file={VOCAB}", "--max_examples=1",
                   "--max_seq_length=64", "--max_predictions_per_seq=10")
  assert result.returncode == 0, result.stderr[-2000:]
  lines = result.stdout.splitlines()
  assert "max_seq_length=64, max_predictions_per_seq=10" in lines[0]
  assert lines[1].startswith("  segment A: [CLS] ")
  assert "[[MASK]=the]" in lines[1]
  assert lines[3].startswith("  next_sentence_label: 0 (IsNext), 10 masked")
  assert lines[-1].endswith("all 522 records match max_seq_length=64, "
                            "max_predictions_per_seq=10")


@pytest.mark.shared
def test_length_mismatch_names_the_flag_to_change():
  result = inspect("--max_examples=0", "--max_predictions_per_seq=20")
  assert result.returncode != 0
  assert ("record 0 has 10 masked_lm_positions, but "
          "--max_predictions_per_seq=20; pass --max_predictions_per_seq=10"
          in result.stderr)


def test_no_matching_file():
  result = subprocess.run([sys.executable, SCRIPT,
                           "--input_file=/nonexistent/*.tfrecord"],
                          capture_output=True, text=True, timeout=300,
                          check=False)
  assert result.returncode != 0
  assert "matches no file" in result.stderr
