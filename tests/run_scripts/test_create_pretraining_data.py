"""run_scripts/create_pretraining_data.py against the original's own outputs."""

import json
import os
import shutil
import re
import stat
import subprocess
import sys
import time

import pytest
import tensorflow as tf

from bert_tf import tokenization
from bert_tf.pretraining import (instances as pretraining_instances,
                                 pipeline as pretraining_data)
from bert_tf.wordpiece.vocabulary import demo_vocab_file as vocabulary_file
from tests.support.helpers import (PROJECT_DIR, SHARED_DIR,
                                   assert_fails_in_one_line, run_script_cases)

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


@pytest.mark.shared
def test_forks_write_what_one_process_writes(tmp_path):
  """A corpus large enough for the script to tokenise and serialise on every
  core (forks: its process has no TensorFlow; each pass but the last
  serialised in a fork while the next is made) gives the bytes that one
  process (this one, which has loaded TensorFlow, so never forks) writes."""
  with open(os.path.join(REFERENCE_DIR, "corpus.txt"), encoding="utf-8") as r:
    text = r.read().rstrip("\n") + "\n\n"
  corpus = tmp_path / "corpus.txt"
  corpus.write_text(text * 10, encoding="utf-8")  # 1.2 MB
  flag_values = {"input_file": corpus, "vocab_file": vocabulary_file(),
                 "dupe_factor": 3, "max_seq_length": 64,
                 "max_predictions_per_seq": 10}
  result = run_script({**flag_values,
                       "output_file": tmp_path / "forked.tfrecord"})
  assert result.returncode == 0, result.stderr[-3000:]
  summary = pretraining_data.create_pretraining_data(
      [str(corpus)], [str(tmp_path / "one.tfrecord")],
      tokenization.FullTokenizer(vocabulary_file()),
      pretraining_instances.InstanceOptions(
          max_seq_length=64, max_predictions_per_seq=10, dupe_factor=3),
      random_seed=12345)
  # Every pass is large enough to be serialised in forks.
  assert summary.instances > 3 * pretraining_data._SERIALIZED_IN_FORKS_FROM  # pylint: disable=protected-access
  assert ((tmp_path / "forked.tfrecord").read_bytes()
          == (tmp_path / "one.tfrecord").read_bytes())


@pytest.fixture()
def corpus(tmp_path):
  path = tmp_path / "corpus.txt"
  path.write_text(
      "The first document has a sentence.\nAnd a second one here.\n\n"
      "Another document starts.\nIt also ends, eventually.\n", "utf-8")
  return str(path)


@pytest.fixture()
def vocab(tmp_path):
  from bert_tf.wordpiece import vocabulary
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


# Refused before any work, in one line: Python's checks, the same on every
# TensorFlow; one leg of CI runs it.
@pytest.mark.parametrize("flag_values, message", [
    ({"input_file": "missing.txt"}, "missing.txt matches no file"),
    ({"input_file": "EMPTY"}, "is empty"),
    ({"vocab_file": "nowhere/vocab.txt"},
     "--vocab_file=nowhere/vocab.txt does not exist"),
    ({"vocab_file": "."},
     "--vocab_file=\\. is a directory with no vocabulary"),
    ({"max_predictions_per_seq": 200}, "--max_predictions_per_seq=200"),
    ({"masked_lm_prob": 0.0}, "--masked_lm_prob=0.0: must be in \\(0, 1\\]"),
    ({"masked_lm_prob": 1.5}, "--masked_lm_prob=1.5"),
    ({"dupe_factor": 0}, "--dupe_factor=0"),
])
@pytest.mark.rerun
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
  assert re.search(r"Done: 2 files, 4 documents, \d+ tokens, \d+ instances "
                   r"in .* s \(\d+ tokens/s\); records per shard: min \d+, "
                   r"mean [\d.]+, max \d+", result.stderr), result.stderr[-3000:]
  for name in texts:
    alone = str(tmp_path / f"{name}.alone.tfrecord")
    result = run_script({**common, "input_file": str(tmp_path / name),
                         "output_file": alone})
    assert result.returncode == 0, result.stderr[-3000:]
    parallel = str(tmp_path / "parallel" / f"{name}.tfrecord")
    with open(parallel, "rb") as one, open(alone, "rb") as other:
      assert one.read() == other.read()


# Refused before any work, in one line: Python's checks, the same on every
# TensorFlow; one leg of CI runs it.
@pytest.mark.rerun
def test_num_workers_needs_output_dir(corpus, vocab, tmp_path):
  result = run_script({"input_file": corpus, "vocab_file": vocab,
                       "num_workers": 2,
                       "output_file": str(tmp_path / "x.tfrecord")})
  assert result.returncode != 0
  assert "--num_workers needs --output_dir" in result.stderr


@pytest.mark.parametrize("vocab_source", ["file", "model_directory"])
def test_runs_without_importing_tensorflow(corpus, vocab, tmp_path,
                                           vocab_source):
  """TensorFlow's import alone takes seconds; local data never needs it.
  Apache Beam is imported only with --beam_runner. --vocab_file may name a
  model directory: its vocabulary and casing (a cased tokenizer_config.json
  here, which --do_lower_case's default does not override)."""
  if vocab_source == "model_directory":
    (tmp_path / "model").mkdir()
    shutil.copy(vocab, tmp_path / "model" / "vocab.txt")
    (tmp_path / "model" / "tokenizer_config.json").write_text(
        '{"do_lower_case": false}')
    vocab = tmp_path / "model"
  script = (
      "import runpy, sys\n"
      f"sys.path.insert(0, {os.path.dirname(SCRIPT)!r})  # as python does\n"
      f"sys.argv = ['create_pretraining_data', '--input_file={corpus}', "
      f"'--vocab_file={vocab}', '--output_file={tmp_path / 'x.tfrecord'}']\n"
      "try:\n"
      f"  runpy.run_path({SCRIPT!r}, run_name='__main__')\n"
      "except SystemExit as stop:\n"
      "  assert not stop.code, stop.code\n"
      "print('tensorflow' in sys.modules, 'apache_beam' in sys.modules)\n")
  result = subprocess.run([sys.executable, "-c", script], capture_output=True,
                          text=True, timeout=300, check=False)
  assert result.returncode == 0, result.stderr[-2000:]
  assert result.stdout.strip().splitlines()[-1] == "False False"
  assert (tmp_path / "x.tfrecord").stat().st_size > 0
  if vocab_source == "model_directory":
    assert "do_lower_case: False (from --vocab_file=" in result.stderr


@pytest.fixture(scope="module")
def bad_path_runs(tmp_path_factory):
  """Each bad output or input path that could lose a user's data (BAD_PATHS,
  a symlink, a stale temporary), run against the same user files."""
  directory = tmp_path_factory.mktemp("bad_paths")
  files = {
      "corpus.txt": b"A first sentence.\nA second one.\n\nAnother document.\n",
      "vocab.txt": open(vocabulary_file(), "rb").read(),
      "a.tfrecord": b"the user's a", "c.tfrecord": b"the user's c",
      "c1": b"a plain file",
  }
  for name, content in files.items():
    (directory / name).write_bytes(content)
  (directory / "link.txt").symlink_to(directory / "corpus.txt")
  (directory / "adir").mkdir()
  os.mkfifo(directory / "fifo")
  if os.geteuid() == 0:
    os.mknod(directory / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
  records = directory / "my.tfrecord"
  result = run_script({"input_file": directory / "corpus.txt",
                       "vocab_file": directory / "vocab.txt",
                       "output_file": records, "max_seq_length": 16,
                       "max_predictions_per_seq": 2})
  assert result.returncode == 0, result.stderr[-2000:]
  files["my.tfrecord"] = records.read_bytes()
  stale = directory / f"out.tfrecord.tmp-{'a' * 32}"
  stale.write_bytes(b"left by a killed run")
  (directory / "through.tfrecord").symlink_to(directory / "target.tfrecord")
  (directory / "loop.tfrecord").symlink_to(directory / "loop.tfrecord")

  def flags_for(**values):
    paths = {"input_file": "corpus.txt", "vocab_file": "vocab.txt", **values}
    return {"max_seq_length": 16, "max_predictions_per_seq": 2, **{
        name: ",".join(str(directory / part) for part in value.split(","))
        if isinstance(value, str) else value
        for name, value in paths.items()}}

  cases = {name: flags_for(**values) for name, values in BAD_PATHS.items()}
  cases["through a symlink"] = flags_for(output_file="through.tfrecord")
  cases["next to a stale temporary"] = flags_for(output_file="out.tfrecord")
  results = dict(zip(cases, run_script_cases("create_pretraining_data.py",
                                             cases.values())))
  return directory, files, results


BAD_PATHS = {
    "swapped": dict(input_file="my.tfrecord", output_file="corpus.txt"),
    "output is the input": dict(output_file="corpus.txt"),
    "output is the vocabulary": dict(output_file="vocab.txt"),
    "output links to the input": dict(output_file="link.txt"),
    "output is a FIFO": dict(output_file="fifo"),
    "output is a device": dict(output_file="null"),
    "output is a directory": dict(output_file="adir"),
    "a set with a directory": dict(output_file="a.tfrecord,adir,c.tfrecord"),
    "output under a file": dict(output_file="c1/small.txt"),
    "output_dir is a file": dict(output_dir="c1", num_workers=2),
    "a TFRecord as text": dict(input_file="my.tfrecord",
                               output_file="new.tfrecord"),
    "output is a symlink loop": dict(output_file="loop.tfrecord"),
    "input is a symlink loop": dict(input_file="loop.tfrecord",
                                    output_file="new.tfrecord"),
    "negative workers": dict(output_dir="new", num_workers=-2),
    "negative workers on Beam": dict(output_dir="new", num_workers=-2,
                                     beam_runner="DirectRunner"),
    "output_dir beside output_file": dict(output_file="new.tfrecord",
                                          output_dir="new"),
}
BAD_PATH_MESSAGES = {
    "swapped": "--input_file: .*my.tfrecord is a TFRecord file, not text",
    "output is the input": "--output_file=.*corpus.txt is the same file as "
                           "--input_file=.*corpus.txt; refusing to overwrite "
                           "an input",
    "output is the vocabulary": "--output_file=.*vocab.txt is the same file "
                                "as --vocab_file=",
    "output links to the input": "--output_file=.*link.txt is the same file "
                                 "as --input_file=.*corpus.txt",
    "output is a FIFO": "--output_file=.*fifo is a FIFO, not a regular file",
    "output is a device": "--output_file=.*null is a character device",
    "output is a directory": "--output_file=.*adir is a directory",
    "a set with a directory": "--output_file=.*adir is a directory",
    "output under a file": "--output_file=.*c1/small.txt: .*c1 is a file, "
                           "not a directory",
    "output_dir is a file": "--output_dir=.*c1 is a file, not a directory",
    "a TFRecord as text": "--input_file: .*my.tfrecord is a TFRecord file",
    "output is a symlink loop": "--output_file=.*loop.tfrecord is a symlink "
                                "loop, not a regular file",
    "input is a symlink loop": "--input_file: .*loop.tfrecord is a symlink "
                               "loop, not a file",
    "negative workers": "--num_workers=-2: must be 0 or more$",
    "negative workers on Beam": "--num_workers=-2: must be 0 or more$",
    "output_dir beside output_file": "--output_dir is only for "
                                     "--num_workers or --beam_runner",
}


# Refused before any work, in one line: Python's checks, the same on every
# TensorFlow; one leg of CI runs it.
@pytest.mark.parametrize("case", BAD_PATHS)
@pytest.mark.rerun
def test_bad_paths_are_refused_in_one_line(bad_path_runs, case):
  directory, _, results = bad_path_runs
  if case == "output is a device" and os.geteuid() != 0:
    pytest.skip("mknod needs root")
  assert_fails_in_one_line(results[case], "create_pretraining_data",
                           BAD_PATH_MESSAGES[case])


# Which files a run writes: Python's work, the same on every TensorFlow; one
# leg of CI runs it.
@pytest.mark.rerun
def test_after_the_bad_paths_every_user_file_is_as_it_was(bad_path_runs):
  directory, files, _ = bad_path_runs
  for name, content in files.items():
    assert (directory / name).read_bytes() == content, name
  assert stat.S_ISFIFO(os.stat(directory / "fifo").st_mode)
  assert (directory / "link.txt").is_symlink()
  assert (directory / "adir").is_dir() and not os.listdir(directory / "adir")
  assert not (directory / "new.tfrecord").exists()
  assert not (directory / "new").exists()


# Which files a run writes: Python's work, the same on every TensorFlow; one
# leg of CI runs it.
@pytest.mark.rerun
def test_a_symlink_output_is_written_through(bad_path_runs):
  directory, _, results = bad_path_runs
  assert results["through a symlink"][0] == 0
  assert (directory / "through.tfrecord").is_symlink()
  assert (directory / "target.tfrecord").stat().st_size > 0


# Which files a run writes: Python's work, the same on every TensorFlow; one
# leg of CI runs it.
@pytest.mark.rerun
def test_stale_temporaries_of_the_output_are_removed(bad_path_runs):
  directory, _, results = bad_path_runs
  assert results["next to a stale temporary"][0] == 0
  assert (directory / "out.tfrecord").stat().st_size > 0
  assert not [name for name in os.listdir(directory) if ".tmp-" in name]


# Which files a run writes: Python's work, the same on every TensorFlow; one
# leg of CI runs it.
@pytest.mark.rerun
def test_a_failing_worker_leaves_every_earlier_output(vocab, tmp_path):
  (tmp_path / "good.txt").write_text("Lists can be sorted.\nIn place.\n")
  (tmp_path / "blank.txt").write_text("\n   \n")  # no text: its worker fails
  output_dir = tmp_path / "out"
  output_dir.mkdir()
  for name in ("good.txt", "blank.txt"):
    (output_dir / f"{name}.tfrecord").write_bytes(b"an earlier run's")
  result = run_script({"input_file": f"{tmp_path}/*.txt",
                       "vocab_file": vocab, "num_workers": 2,
                       "output_dir": output_dir, "max_seq_length": 16,
                       "max_predictions_per_seq": 2})
  assert result.returncode == 1
  assert "blank.txt" in result.stderr.strip().splitlines()[-1]
  assert sorted(os.listdir(output_dir)) == ["blank.txt.tfrecord",
                                            "good.txt.tfrecord"]
  for name in os.listdir(output_dir):
    assert (output_dir / name).read_bytes() == b"an earlier run's"


# Refused before any work, in one line: Python's checks, the same on every
# TensorFlow; one leg of CI runs it.
@pytest.mark.rerun
def test_two_inputs_of_one_name_are_refused_before_any_work(vocab, tmp_path):
  for directory in ("a", "b"):
    (tmp_path / directory).mkdir()
    (tmp_path / directory / "corpus.txt").write_text("One sentence.\n")
  result = run_script({"input_file": f"{tmp_path}/*/corpus.txt",
                       "vocab_file": vocab, "num_workers": 2,
                       "output_dir": tmp_path / "out"})
  assert_fails_in_one_line(
      (result.returncode, result.stderr), "create_pretraining_data",
      "b/corpus.txt and .*a/corpus.txt would both write .*out/corpus.txt."
      "tfrecord; give input files distinct names")
  assert not (tmp_path / "out").exists()


def children_of(pid):
  """The live processes whose parent is `pid`."""
  found = []
  for entry in os.listdir("/proc"):
    if entry.isdigit():
      try:
        with open(f"/proc/{entry}/stat", encoding="utf-8") as reader:
          fields = reader.read().rpartition(")")[2].split()
      except OSError:
        continue
      if fields[1] == str(pid) and fields[0] != "Z":
        found.append(int(entry))
  return found


def is_alive(pid):
  try:
    with open(f"/proc/{pid}/stat", encoding="utf-8") as reader:
      return reader.read().rpartition(")")[2].split()[0] != "Z"
  except OSError:
    return False


def assert_children_die_with_the_parent(flag_values, min_children):
  """Starts the script, kill -9s it once it has `min_children` children at
  work, and checks that none of them outlives it by more than a few
  seconds."""
  process = subprocess.Popen(
      [sys.executable, SCRIPT,
       *[f"--{name}={value}" for name, value in flag_values.items()]],
      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
  deadline = time.time() + 120
  children = []
  while len(children) < min_children and process.poll() is None:
    assert time.time() < deadline, "the script never forked"
    time.sleep(0.05)
    children = children_of(process.pid)
  assert process.poll() is None, "the script ended before it could be killed"
  process.kill()
  process.wait()
  deadline = time.time() + 10
  while any(is_alive(child) for child in children) and time.time() < deadline:
    time.sleep(0.1)
  assert not [child for child in children if is_alive(child)]


# What a killed or interrupted run leaves: Python's, the same on every
# TensorFlow; one leg of CI runs it.
@pytest.mark.shared
@pytest.mark.rerun
def test_kill_9_of_the_script_leaves_no_fork_behind(tmp_path):
  with open(os.path.join(REFERENCE_DIR, "corpus.txt"), encoding="utf-8") as r:
    text = r.read().rstrip("\n") + "\n\n"
  corpus = tmp_path / "corpus.txt"
  corpus.write_text(text * 10, encoding="utf-8")  # 1.2 MB: forks at work
  assert_children_die_with_the_parent(
      {"input_file": corpus, "vocab_file": vocabulary_file(),
       "dupe_factor": 10, "max_seq_length": 64,
       "max_predictions_per_seq": 10,
       "output_file": tmp_path / "out.tfrecord"}, min_children=1)


# What a killed or interrupted run leaves: Python's, the same on every
# TensorFlow; one leg of CI runs it.
@pytest.mark.shared
@pytest.mark.rerun
def test_kill_9_of_the_script_leaves_no_worker_behind(tmp_path):
  with open(os.path.join(REFERENCE_DIR, "corpus.txt"), encoding="utf-8") as r:
    text = r.read()
  for name in ("a.txt", "b.txt", "c.txt"):
    (tmp_path / name).write_text(text * 3, encoding="utf-8")
  # Two workers, forks of the script.
  assert_children_die_with_the_parent(
      {"input_file": tmp_path / "*.txt", "vocab_file": vocabulary_file(),
       "dupe_factor": 10, "max_seq_length": 64,
       "max_predictions_per_seq": 10, "num_workers": 2,
       "output_dir": tmp_path / "out"}, min_children=2)
