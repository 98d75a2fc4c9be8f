"""run_scripts/create_pretraining_data.py against the original's own outputs."""

import json
import re
import os
import subprocess
import sys

import pytest
import tensorflow as tf

from tests.helpers import PROJECT_DIR, SHARED_DIR

REFERENCE_DIR = os.path.join(SHARED_DIR, "reference", "create_pretraining_data")
SCRIPT = os.path.join(PROJECT_DIR, "run_scripts", "create_pretraining_data.py")


def reference_cases():
  path = os.path.join(REFERENCE_DIR, "cases.json")
  if not os.path.exists(path):
    return []
  with open(path, encoding="utf-8") as reader:
    return json.load(reader)["cases"]


def run_script(flag_values, cwd=None):
  args = [f"--{name}={value}" for name, value in flag_values.items()]
  return subprocess.run([sys.executable, SCRIPT, *args], cwd=cwd,
                        capture_output=True, text=True, timeout=600,
                        check=False)


def read_examples(path):
  return [tf.train.Example.FromString(record.numpy())
          for record in tf.data.TFRecordDataset(path)]


@pytest.mark.shared
@pytest.mark.parametrize("case", reference_cases(),
                         ids=lambda case: case["name"])
def test_writes_the_original_records(case, tmp_path):
  outputs = [str(tmp_path / name) for name in case["outputs"]]
  result = run_script({**case["flags"], "output_file": ",".join(outputs)},
                      cwd=REFERENCE_DIR)
  assert result.returncode == 0, result.stderr[-3000:]
  total = 0
  for ours, theirs in zip(outputs, case["outputs"]):
    ours, theirs = read_examples(ours), read_examples(
        os.path.join(REFERENCE_DIR, theirs))
    assert len(ours) == len(theirs)
    for index, (mine, original) in enumerate(zip(ours, theirs)):
      assert mine == original, f"{case['name']}: record {index} differs"
    total += len(ours)
  assert total == case["instances"]


@pytest.fixture()
def corpus(tmp_path):
  path = tmp_path / "corpus.txt"
  path.write_text(
      "The first document has a sentence.\nAnd a second one here.\n\n"
      "Another document starts.\nIt also ends, eventually.\n", "utf-8")
  return str(path)


@pytest.fixture()
def vocab(tmp_path):
  from bert_tf import vocabulary  # the project's own vocabulary
  return vocabulary.demo_vocab_file()


def test_output_bytes_are_stable(corpus, vocab, tmp_path):
  contents = []
  for name in ("one", "two"):
    output = str(tmp_path / f"{name}.tfrecord")
    result = run_script({"input_file": corpus, "vocab_file": vocab,
                         "output_file": output, "dupe_factor": 3,
                         "max_seq_length": 16, "max_predictions_per_seq": 3})
    assert result.returncode == 0, result.stderr[-3000:]
    with open(output, "rb") as reader:
      contents.append(reader.read())
  assert contents[0] == contents[1] and contents[0]


@pytest.mark.parametrize("flag_values, message", [
    ({"input_file": "missing.txt"}, "missing.txt matches no file"),
    ({"input_file": "EMPTY"}, "is empty"),
    ({"vocab_file": "nowhere/vocab.txt"}, "nowhere/vocab.txt does not exist"),
    ({"vocab_file": "."}, "--vocab_file: cannot read \\.: Is a directory"),
    ({"max_predictions_per_seq": 200}, "--max_predictions_per_seq=200"),
    ({"masked_lm_prob": 0.0}, "--masked_lm_prob=0.0: must be in \\(0, 1\\]"),
    ({"masked_lm_prob": 1.5}, "--masked_lm_prob=1.5"),
    ({"dupe_factor": 0}, "--dupe_factor=0"),
])
def test_bad_input_fails_clearly_and_keeps_existing_output(
    flag_values, message, corpus, vocab, tmp_path):
  output = tmp_path / "out.tfrecord"
  output.write_bytes(b"what the user already had")
  empty = tmp_path / "empty.txt"
  empty.write_text("")
  values = {"input_file": corpus, "vocab_file": vocab,
            "output_file": str(output), "max_seq_length": 32}
  values.update(flag_values)
  if values["input_file"] == "EMPTY":
    values["input_file"] = str(empty)
  result = run_script(values, cwd=str(tmp_path))
  assert result.returncode != 0
  assert re.search(message, result.stderr), result.stderr[-2000:]
  assert output.read_bytes() == b"what the user already had"
  assert sorted(os.listdir(tmp_path)) == ["corpus.txt", "empty.txt",
                                          "out.tfrecord"]


def test_num_workers_equals_running_each_file_alone(vocab, tmp_path):
  texts = {
      "first.txt": "Lists can be sorted.\nSorting is stable.\n\n"
                   "Dictionaries keep order.\nKeys are unique.\n",
      "second.txt": "Files are opened with open.\nThey should be closed.\n\n"
                    "Paths can be joined.\nThe result is a string.\n",
  }
  for name, text in texts.items():
    (tmp_path / name).write_text(text, "utf-8")
  common = {"vocab_file": vocab, "dupe_factor": 4, "max_seq_length": 24,
            "max_predictions_per_seq": 4, "random_seed": 5}
  result = run_script({**common, "input_file": str(tmp_path / "*.txt"),
                       "num_workers": 2,
                       "output_dir": str(tmp_path / "parallel")})
  assert result.returncode == 0, result.stderr[-3000:]
  assert sorted(os.listdir(tmp_path / "parallel")) == [
      "first.txt.tfrecord", "second.txt.tfrecord"]
  for name in texts:
    alone = str(tmp_path / f"{name}.alone.tfrecord")
    result = run_script({**common, "input_file": str(tmp_path / name),
                         "output_file": alone})
    assert result.returncode == 0, result.stderr[-3000:]
    parallel = str(tmp_path / "parallel" / f"{name}.tfrecord")
    with open(parallel, "rb") as one, open(alone, "rb") as other:
      assert one.read() == other.read()


def test_num_workers_needs_output_dir(corpus, vocab, tmp_path):
  result = run_script({"input_file": corpus, "vocab_file": vocab,
                       "num_workers": 2,
                       "output_file": str(tmp_path / "x.tfrecord")})
  assert result.returncode != 0
  assert "--num_workers needs --output_dir" in result.stderr


def test_runs_without_importing_tensorflow(corpus, vocab, tmp_path):
  """TensorFlow's import alone takes seconds; local data never needs it."""
  script = (
      "import runpy, sys\n"
      f"sys.argv = ['create_pretraining_data', '--input_file={corpus}', "
      f"'--vocab_file={vocab}', '--output_file={tmp_path / 'x.tfrecord'}']\n"
      "try:\n"
      f"  runpy.run_path({SCRIPT!r}, run_name='__main__')\n"
      "except SystemExit as stop:\n"
      "  assert not stop.code, stop.code\n"
      "print('tensorflow' in sys.modules)\n")
  result = subprocess.run([sys.executable, "-c", script], capture_output=True,
                          text=True, timeout=300, check=False)
  assert result.returncode == 0, result.stderr[-2000:]
  assert result.stdout.strip().splitlines()[-1] == "False"
  assert (tmp_path / "x.tfrecord").stat().st_size > 0
