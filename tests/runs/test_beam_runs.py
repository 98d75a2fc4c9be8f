"""The machinery every per-file Beam pipeline shares: Beam's options from
the command line, and the last step that renames a run's outputs into
place together."""

import os
import pathlib

import pytest

pytestmark = pytest.mark.beam


def test_the_direct_runner_never_reaches_the_network():
  """Beam's DirectRunner would first download its Prism runner from GitHub;
  its local FnApiRunner, which it falls back to, needs nothing."""
  from bert_tf.runs import beam_runs  # pylint: disable=g-import-not-at-top
  options = beam_runs.pipeline_options("DirectRunner", [], 2)
  assert options.get_all_options()["runner"] == "FnApiRunner"
  assert options.get_all_options()["direct_num_workers"] == 2


def test_num_workers_is_beams_own_on_other_runners():
  from bert_tf.runs import beam_runs  # pylint: disable=g-import-not-at-top
  options = beam_runs.pipeline_options(
      "DataflowRunner", ["--project=p", "--max_num_workers=9"], 5)
  assert options.get_all_options()["runner"] == "DataflowRunner"
  assert options.get_all_options()["num_workers"] == 5
  assert options.get_all_options()["max_num_workers"] == 9


def test_renaming_into_place_is_safe_to_retry(tmp_path):
  """A runner may run the last step again after it renamed some shards."""
  from bert_tf.runs import beam_runs  # pylint: disable=g-import-not-at-top
  jobs = [(f"{name}.txt", str(tmp_path / f"{name}.tfrecord.tmp-{'c' * 32}"),
           str(tmp_path / f"{name}.tfrecord")) for name in ("a", "b")]
  for _, staged, _ in jobs:
    pathlib.Path(staged).write_bytes(b"new")
  os.replace(jobs[0][1], jobs[0][2])  # the first attempt got this far
  beam_runs._finalize([("a.txt", True), ("b.txt", True)], jobs)  # pylint: disable=protected-access
  assert sorted(os.listdir(tmp_path)) == ["a.tfrecord", "b.tfrecord"]
  assert (tmp_path / "b.tfrecord").read_bytes() == b"new"


def test_a_failed_file_leaves_no_staged_shard(tmp_path):
  from bert_tf.runs import beam_runs  # pylint: disable=g-import-not-at-top
  (tmp_path / "a.tfrecord").write_bytes(b"an earlier run's")
  jobs = [(f"{name}.txt", str(tmp_path / f"{name}.tfrecord.tmp-{'d' * 32}"),
           str(tmp_path / f"{name}.tfrecord")) for name in ("a", "b")]
  pathlib.Path(jobs[0][1]).write_bytes(b"new")
  beam_runs._finalize([("a.txt", True), ("b.txt", False)], jobs)  # pylint: disable=protected-access
  assert os.listdir(tmp_path) == ["a.tfrecord"]
  assert (tmp_path / "a.tfrecord").read_bytes() == b"an earlier run's"


def test_a_failed_run_removes_what_its_writers_staged_too(tmp_path):
  """A writer that writes its staged file through a temporary of its own
  (atomic_outputs) leaves that too when it dies mid-file."""
  from bert_tf.runs import beam_runs  # pylint: disable=g-import-not-at-top
  staged = tmp_path / f"a.npz.tmp-{'e' * 32}"
  (tmp_path / f"{staged.name}.tmp-{'f' * 32}").write_bytes(b"half")
  beam_runs._finalize([("a.txt", False)],  # pylint: disable=protected-access
                      [("a.txt", str(staged), str(tmp_path / "a.npz"))])
  assert os.listdir(tmp_path) == []


def test_a_second_run_into_the_same_output_dir_is_refused(tmp_path):
  """While a run holds --output_dir, another is refused before any work:
  two runs would mix their outputs and remove each other's staged
  files."""
  from bert_tf.files import run_lock  # pylint: disable=g-import-not-at-top
  from bert_tf.runs import beam_runs  # pylint: disable=g-import-not-at-top
  (tmp_path / "a.txt").write_text("a line\n")
  output_dir = tmp_path / "out"
  with run_lock.owned_directory(str(output_dir), "--output_dir"):
    with pytest.raises(ValueError, match=f"{output_dir}.*{os.getpid()}"):
      beam_runs.write_per_file(
          {str(tmp_path / "a.txt"): str(output_dir / "a.txt.npz")},
          str(output_dir), writer=None, pipeline_options=None)
    assert os.listdir(output_dir) == [run_lock.RUN_LOCK_FILE]
