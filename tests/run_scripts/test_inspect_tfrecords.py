import os
import shutil
import subprocess
import sys

import pytest

from bert_tf.data.tfrecords import RoundRobinWriter
from bert_tf.pretraining import features as pretraining_features
from bert_tf.pretraining.instances import TrainingInstance
from tests.support.helpers import (PROJECT_DIR, SHARED_DIR,
                                   assert_fails_in_one_line, run_script_cases)

SCRIPT = os.path.join(PROJECT_DIR, "run_scripts", "inspect_tfrecords.py")
RECORDS = os.path.join(SHARED_DIR, "reference", "create_pretraining_data",
                       "whole_word.tfrecord")
VOCAB = os.path.join(SHARED_DIR, "vocab", "bert-base-uncased-vocab.txt")


def inspect(*flags):
  return subprocess.run([sys.executable, SCRIPT, f"--input_file={RECORDS}",
                         *flags], capture_output=True, text=True, timeout=300,
                        check=False)


@pytest.mark.shared
@pytest.mark.parametrize("vocab_source", ["file", "model_directory"])
def test_prints_tokens_masks_and_label_and_checks_every_record(
    vocab_source, tmp_path):
  vocab = VOCAB
  if vocab_source == "model_directory":  # its vocab.txt is taken
    shutil.copy(VOCAB, tmp_path / "vocab.txt")
    vocab = tmp_path
  result = inspect(f"--vocab_file={vocab}", "--max_examples=1",
                   "--max_seq_length=64", "--max_predictions_per_seq=10")
  assert result.returncode == 0, result.stderr[-2000:]
  lines = result.stdout.splitlines()
  assert "max_seq_length=64, max_predictions_per_seq=10" in lines[0]
  assert lines[1].startswith("  segment A: [CLS] ")
  assert "[[MASK]=the]" in lines[1]
  assert lines[3].startswith("  next_sentence_label: 0 (IsNext), 10 masked")
  assert lines[-1].endswith("all 522 records match max_seq_length=64, "
                            "max_predictions_per_seq=10")


# An error message naming the flag: bert_tf's own TFRecord reader, Python's,
# the same on every TensorFlow; one leg of CI runs it.
@pytest.mark.shared
@pytest.mark.rerun
def test_length_mismatch_names_the_flag_to_change():
  result = inspect("--max_examples=0", "--max_predictions_per_seq=20")
  assert result.returncode != 0
  assert ("record 0 has 10 masked_lm_positions, but "
          "--max_predictions_per_seq=20; pass --max_predictions_per_seq=10"
          in result.stderr)


# An error message: Python's, the same on every TensorFlow; one leg of CI
# runs it.
@pytest.mark.rerun
def test_no_matching_file():
  result = subprocess.run([sys.executable, SCRIPT,
                           "--input_file=/nonexistent/*.tfrecord"],
                          capture_output=True, text=True, timeout=300,
                          check=False)
  assert result.returncode != 0
  assert "matches no file" in result.stderr


def write_records(path, lengths):
  """Pretraining records of the given max_seq_lengths."""
  instance = TrainingInstance(input_ids=[101, 7, 8, 102, 9, 102],
                              first_segment_length=4, masked_lm_positions=[2],
                              masked_lm_ids=[1000], is_random_next=False)
  with RoundRobinWriter([str(path)]) as writer:
    for max_seq_length in lengths:
      writer.write(pretraining_features.serialize_instance(
          instance, max_seq_length, 2))
  return path


# Damaged files named in one line by bert_tf's own TFRecord reader: Python's,
# the same on every TensorFlow; one leg of CI runs it.
@pytest.mark.rerun
def test_damaged_files_and_vocabularies_are_named_in_one_line(tmp_path):
  good = write_records(tmp_path / "good.tfrecord", [8] * 3)
  truncated = tmp_path / "truncated.tfrecord"
  truncated.write_bytes(good.read_bytes()[:-5])
  flipped = bytearray(good.read_bytes())
  flipped[len(flipped) // 2] ^= 0xFF
  (tmp_path / "flipped.tfrecord").write_bytes(bytes(flipped))
  mixed = write_records(tmp_path / "mixed.tfrecord", [8, 8, 16])
  text = tmp_path / "corpus.txt"
  text.write_text("A sentence, not a record.\n")
  small_vocab = tmp_path / "vocab.txt"
  small_vocab.write_text("".join(f"t{index}\n" for index in range(500)))
  cases = [
      ({"input_file": truncated}, "truncated.tfrecord: record 2 \\(byte "
                                  "\\d+\\): truncated"),
      ({"input_file": tmp_path / "flipped.tfrecord"},
       "flipped.tfrecord: record 1 \\(byte \\d+\\): corrupt"),
      ({"input_file": text}, "corpus.txt: not a TFRecord file \\(it begins "
                             "like text"),
      ({"input_file": mixed, "max_examples": 0, "max_seq_length": 8},
       "mixed.tfrecord: record 2 has 16 input_ids, but --max_seq_length=8"),
      ({"input_file": good, "vocab_file": tmp_path / "missing.txt"},
       "--vocab_file=.*missing.txt does not exist"),
      ({"input_file": good, "vocab_file": small_vocab},
       "good.tfrecord: record 0 has token id 1000, but --vocab_file=.*vocab"
       ".txt has only 500 tokens"),
  ]
  results = run_script_cases("inspect_tfrecords.py",
                             [flag_values for flag_values, _ in cases])
  for (_, message), result in zip(cases, results):
    assert_fails_in_one_line(result, "inspect_tfrecords", message)
