"""create_pretraining_data --beam_runner: the shards --num_workers writes,
from an Apache Beam pipeline (the DirectRunner here), under #7's rules."""

import importlib.util
import os
import subprocess
import sys

import pytest

from bert_tf import tokenization
from bert_tf.data import tfrecords
from bert_tf.pretraining import pipeline as pretraining_data
from bert_tf.pretraining.instances import InstanceOptions
from bert_tf.wordpiece.vocabulary import demo_vocab_file
from tests.run_scripts.test_create_pretraining_data import SCRIPT, run_script
from tests.support.helpers import assert_fails_in_one_line

pytestmark = pytest.mark.beam

TEXTS = {
    "first.txt": "Lists can be sorted.\nSorting is stable.\n\n"
                 "Dictionaries keep order.\nKeys are unique.\n",
    "second.txt": "Files are opened with open.\nThey should be closed.\n\n"
                  "Paths can be joined.\nThe result is a string.\n"
                  "Strings are immutable.\n",
    "third.txt": "A set holds each item once.\n\nTuples are fixed.\n"
                 "They can be keys.\nLists cannot.\n",
}
OPTIONS = InstanceOptions(max_seq_length=24, max_predictions_per_seq=4,
                          dupe_factor=4)
FLAGS = {"vocab_file": demo_vocab_file(), "dupe_factor": 4,
         "max_seq_length": 24, "max_predictions_per_seq": 4,
         "random_seed": 5, "beam_runner": "DirectRunner"}


@pytest.fixture(scope="module")
def beam_runs(tmp_path_factory):
  """Two Beam runs into one directory, two worker processes each; before
  the second, one shard is damaged and a killed run's temporary left."""
  directory = tmp_path_factory.mktemp("beam")
  for name, text in TEXTS.items():
    (directory / name).write_text(text, "utf-8")
  output_dir = directory / "records"
  flag_values = {**FLAGS, "input_file": directory / "*.txt",
                 "output_dir": output_dir, "num_workers": 2}
  first = run_script(flag_values)
  assert first.returncode == 0, first.stderr[-3000:]
  shards = {name: path.read_bytes()
            for name, path in sorted(_shards(output_dir).items())}
  (output_dir / "second.txt.tfrecord").write_bytes(b"damaged")
  (output_dir / f"third.txt.tfrecord.tmp-{'b' * 32}").write_bytes(b"killed")
  second = run_script(flag_values)
  assert second.returncode == 0, second.stderr[-3000:]
  return directory, first, shards, second


def _shards(output_dir):
  return {path.name: path for path in output_dir.iterdir()}


def test_every_shard_holds_the_records_of_its_file_alone(beam_runs, tmp_path):
  directory, _, shards, _ = beam_runs
  assert sorted(shards) == [f"{name}.tfrecord" for name in sorted(TEXTS)]
  tokenizer = tokenization.FullTokenizer(demo_vocab_file())
  for name in TEXTS:
    alone = tmp_path / f"{name}.tfrecord"
    pretraining_data.create_pretraining_data(
        [str(directory / name)], [str(alone)], tokenizer, OPTIONS,
        random_seed=5)
    beam_shard = tmp_path / f"{name}.beam"
    beam_shard.write_bytes(shards[f"{name}.tfrecord"])
    expected = list(tfrecords.read_records(str(alone)))
    assert list(tfrecords.read_records(str(beam_shard))) == expected, name
    assert len(expected) > 4


def test_a_rerun_replaces_every_shard_with_the_same_bytes(beam_runs):
  directory, _, shards, _ = beam_runs
  now = {name: path.read_bytes()
         for name, path in _shards(directory / "records").items()}
  assert now == shards  # the damaged one replaced, the temporary removed


def test_the_run_ends_with_a_summary(beam_runs):
  directory, first, _, _ = beam_runs
  records = [len(list(tfrecords.read_records(str(path))))
             for path in _shards(directory / "records").values()]
  summary = [line for line in first.stderr.splitlines() if "Done: " in line]
  assert len(summary) == 1, first.stderr[-3000:]
  assert (f"Done: 3 files, 6 documents, " in summary[0]
          and f"{sum(records)} instances in " in summary[0]), summary
  assert summary[0].endswith(
      f"records per shard: min {min(records)}, mean "
      f"{sum(records) / 3:.1f}, max {max(records)}"), summary


def test_each_file_is_logged_as_it_is_done(beam_runs):
  directory, first, _, _ = beam_runs
  for name in TEXTS:
    assert f"{directory / name}: 2 documents, " in first.stderr


def test_a_failed_file_is_named_and_no_shard_is_written(tmp_path):
  (tmp_path / "good.txt").write_text("Lists can be sorted.\nIn place.\n")
  (tmp_path / "blank.txt").write_text("\n   \n")  # no text: it fails
  # A TFRecord named as text: it fails, and is reported first.
  with tfrecords.RoundRobinWriter([str(tmp_path / "a_records.txt")]) as writer:
    writer.write(b"a record")
  output_dir = tmp_path / "out"
  output_dir.mkdir()
  (output_dir / "good.txt.tfrecord").write_bytes(b"an earlier run's")
  result = run_script({**FLAGS, "input_file": f"{tmp_path}/*.txt",
                       "output_dir": output_dir})
  assert result.returncode == 1
  message = result.stderr.strip().splitlines()[-1]
  assert_fails_in_one_line(
      (result.returncode, message), "create_pretraining_data",
      "--input_file: .*a_records.txt is a TFRecord file, not text .* "
      r"\(1 more failed\); no shard of this run was written")
  # Each failure is named once, not "--input_file: x: --input_file: x is a
  # TFRecord...".
  assert message.count("--input_file") == 1, message
  assert "blank.txt failed: no text in" in result.stderr
  assert os.listdir(output_dir) == ["good.txt.tfrecord"]
  assert (output_dir / "good.txt.tfrecord").read_bytes() == b"an earlier run's"


@pytest.mark.parametrize("flag_values, expected", [
    ({"beam_runner": "DataflowRunner", "project": "p"},
     "--input_file=.*corpus.txt: DataflowRunner's workers cannot read this "
     "machine's files; give a gs:// path"),
    ({"bogus_option": 1}, "--bogus_option: neither a flag of this script nor "
                          "an Apache Beam pipeline option"),
    ({"runner": "DirectRunner"}, "--runner: give the runner as --beam_runner"),
    ({"beam_runner": None, "project": "p"},
     "unknown flag --project=p \\(Apache Beam's pipeline options need "
     "--beam_runner\\)"),
    ({"output_file": "x.tfrecord"},
     "--beam_runner needs --output_dir instead of --output_file"),
])
def test_flags_are_checked_before_any_work(flag_values, expected, tmp_path):
  corpus = tmp_path / "corpus.txt"
  corpus.write_text("One sentence.\n")
  values = {**FLAGS, "input_file": corpus, "output_dir": tmp_path / "out",
            **flag_values}
  result = run_script({name: value for name, value in values.items()
                       if value is not None}, cwd=tmp_path)
  assert_fails_in_one_line((result.returncode, result.stderr),
                           "create_pretraining_data", expected)
  assert sorted(os.listdir(tmp_path)) == ["corpus.txt"]


def _installed(module):
  try:
    return importlib.util.find_spec(module) is not None
  except ModuleNotFoundError:  # its parent package is not
    return False


@pytest.mark.skipif(_installed("google.cloud.storage"),
                    reason="would submit a Dataflow job")
def test_a_runner_without_its_extra_fails_in_one_line(tmp_path):
  from bert_tf.pretraining import beam_pipeline as pretraining_beam  # pylint: disable=g-import-not-at-top
  from bert_tf.runs import beam_runs  # pylint: disable=g-import-not-at-top
  corpus = tmp_path / "corpus.txt"
  corpus.write_text("One sentence.\nAnother.\n")
  options = beam_runs.pipeline_options("DataflowRunner", [
      "--project=my-project-123", "--region=us-central1",
      "--temp_location=gs://my-bucket-123/tmp"])
  with pytest.raises(ValueError, match="--beam_runner: Google Cloud "
                     "Dataflow runner not available, please install "
                     "apache_beam\\[gcp\\]"):
    pretraining_beam.create_with_beam(
        [str(corpus)], str(tmp_path / "out"),
        pretraining_data.TokenizerOptions(demo_vocab_file()), OPTIONS, 5,
        options)
  assert os.listdir(tmp_path / "out") == []


def test_without_apache_beam_the_flag_says_what_to_install(tmp_path):
  corpus = tmp_path / "corpus.txt"
  corpus.write_text("One sentence.\n")
  script = (
      "import runpy, sys\n"
      "sys.modules['apache_beam'] = None  # as if it were not installed\n"
      f"sys.path.insert(0, {os.path.dirname(SCRIPT)!r})\n"
      f"sys.argv = ['create_pretraining_data', '--input_file={corpus}', "
      f"'--vocab_file={FLAGS['vocab_file']}', "
      f"'--output_dir={tmp_path / 'out'}', '--beam_runner=DirectRunner']\n"
      f"runpy.run_path({SCRIPT!r}, run_name='__main__')\n")
  result = subprocess.run([sys.executable, "-c", script], capture_output=True,
                          text=True, timeout=300, check=False)
  assert_fails_in_one_line(
      (result.returncode, result.stderr), "create_pretraining_data",
      '--beam_runner needs Apache Beam: pip install -e "\\.\\[beam\\]"')
  assert not (tmp_path / "out").exists()
