"""run_files: an --output_dir that holds another model is refused before any
work, and a run that would go on from checkpoints trained with other flags
is refused naming the flag."""

import json
import os
import shutil

import pytest

from bert_tf.runs import run_files
from tests.support.helpers import PROJECT_DIR, within_seconds

FIXTURES = os.path.join(PROJECT_DIR, "tests", "fixtures")
TRANSFORMERS5 = os.path.join(FIXTURES, "huggingface",
                             "transformers5_classifier")
EMBEDDER = os.path.join(FIXTURES, "sentence_transformers", "today_mean")
CROSS_ENCODER = os.path.join(FIXTURES, "sentence_transformers",
                             "cross_encoder")
SST2 = {"task": "glue", "task_name": "sst-2", "lora_rank": None}


def check(output_dir, run_flags=None):
  run_files.check_run_outputs(str(output_dir), ["eval_results.txt"], [],
                              run_flags=run_flags)


def a_runs_directory(directory, run_flags=SST2):
  """What a training run leaves: its checkpoint, listed, its model files
  and the flags that made it."""
  directory.mkdir()
  for name in ("model.ckpt-3.index", "model.ckpt-3.data-00000-of-00001",
               "bert_config.json", "vocab.txt", "eval_results.txt"):
    (directory / name).write_bytes(b"")
  (directory / "checkpoint").write_text(
      'model_checkpoint_path: "model.ckpt-3"\n'
      'all_model_checkpoint_paths: "model.ckpt-3"\n')
  if run_flags is not None:
    run_files.write_run_flags(str(directory), run_flags)
  return directory


def release(directory):
  """A release's directory: bert_model.ckpt, listed in its index."""
  a_runs_directory(directory, None)
  for suffix in ("index", "data-00000-of-00001"):
    (directory / f"model.ckpt-3.{suffix}").rename(
        directory / f"bert_model.ckpt.{suffix}")
  (directory / "checkpoint").write_text(
      'model_checkpoint_path: "bert_model.ckpt"\n')


@pytest.mark.parametrize("kind,expected", [
    ("huggingface", "holds config.json, a Hugging Face folder's config"),
    ("embedder", "holds config.json, a Hugging Face folder's config"),
    ("modules", "holds modules.json, a sentence-transformers folder's "
     "modules"),
    ("cross_encoder", "holds config.json, a Hugging Face folder's config"),
    ("sentence_transformers_config",
     "holds config_sentence_transformers.json, a sentence-transformers "
     "folder's config"),
    ("config_fifo", "holds config.json, a Hugging Face folder's config"),
    ("release", "holds the checkpoint bert_model.ckpt, which no run wrote "
     "\\(a run's are model.ckpt-<step>\\): the run would take it for its "
     "own"),
])
def test_an_output_dir_holding_another_model_is_refused(tmp_path, kind,
                                                        expected):
  output_dir = tmp_path / "output"
  if kind in ("huggingface", "embedder", "cross_encoder"):
    shutil.copytree({"huggingface": TRANSFORMERS5, "embedder": EMBEDDER,
                     "cross_encoder": CROSS_ENCODER}[kind], output_dir)
  elif kind == "release":
    release(output_dir)
  else:
    a_runs_directory(output_dir)
    if kind == "config_fifo":
      os.mkfifo(output_dir / "config.json")
    elif kind == "modules":  # its BERT in a folder of its own
      (output_dir / "modules.json").write_text("[]")
    else:
      (output_dir / "config_sentence_transformers.json").write_text("{}")
  held = sorted(os.listdir(output_dir))
  for run_flags in (SST2, None):  # training, or evaluating
    with within_seconds(10), pytest.raises(
        ValueError, match=f"^--output_dir=.*output {expected}.*; choose "
        f"another --output_dir$"):
      check(output_dir, run_flags)
  assert sorted(os.listdir(output_dir)) == held


def test_a_runs_own_directory_is_taken_to_go_on_with(tmp_path):
  output_dir = a_runs_directory(tmp_path / "output")
  (output_dir / "notes.index").write_text("the user's, not a checkpoint")
  check(output_dir, SST2)
  check(output_dir)
  # A run of an earlier bert_tf recorded no flags: nothing to compare.
  (output_dir / "run_flags.json").unlink()
  check(output_dir, {**SST2, "lora_rank": 4})


def test_the_flags_a_run_trained_with_are_recorded(tmp_path):
  output_dir = a_runs_directory(tmp_path / "output",
                                {**SST2, "lora_rank": 2})
  assert json.loads((output_dir / "run_flags.json").read_text()) == {
      "task": "glue", "task_name": "sst-2", "lora_rank": 2}


@pytest.mark.parametrize("recorded,given,expected", [
    ({"lora_rank": 2}, {},
     "--lora_rank is not given, but the checkpoints in --output_dir were "
     "trained with --lora_rank=2 \\(see .*output/run_flags.json\\): pass "
     "--lora_rank=2 to go on with them, or choose another --output_dir"),
    ({}, {"lora_rank": 4},
     "--lora_rank=4, but the checkpoints in --output_dir were trained "
     "without --lora_rank \\(see .*\\): leave it out to go on with them"),
    ({"lora_rank": 2}, {"lora_rank": 4},
     "--lora_rank=4, but the checkpoints in --output_dir were trained with "
     "--lora_rank=2 \\(see .*\\): pass --lora_rank=2 to go on"),
    ({}, {"task_name": "cola"},
     "--task_name=cola, but the checkpoints in --output_dir were trained "
     "with --task_name=sst-2"),
    ({"task": "ner"}, {},
     "--output_dir holds the checkpoints of a ner run \\(see .*output/"
     "run_flags.json\\), and this run is glue's; choose another "
     "--output_dir"),
    # a flag of another program's run that the file names
    ({"feature_based": "last_hidden"}, {},
     "--feature_based is not given, but the checkpoints in --output_dir "
     "were trained with --feature_based=last_hidden"),
])
def test_going_on_with_other_flags_is_refused_naming_the_flag(
    tmp_path, recorded, given, expected):
  output_dir = a_runs_directory(tmp_path / "output", {**SST2, **recorded})
  with pytest.raises(ValueError, match=f"^{expected}"):
    check(output_dir, {**SST2, **given})
  check(output_dir)  # evaluating what it trained is not refused
  for name in os.listdir(output_dir):
    if name.startswith("model.ckpt-"):
      (output_dir / name).unlink()
  check(output_dir, {**SST2, **given})  # no checkpoint to go on from


@pytest.mark.parametrize("make,expected", [
    (os.mkfifo, "run_flags.json is a FIFO, not the run's flags file"),
    (lambda path: path.mkdir(),
     "run_flags.json is a directory, not the run's flags file"),
    (lambda path: path.write_text(" " * 70000 + "{}"),
     "run_flags.json: 70002 bytes, more than a run's flags take \\(65536\\)"),
    (lambda path: path.write_text('{"lora_rank": '),
     "run_flags.json: not valid JSON \\(line 1, column 15\\)"),
    (lambda path: path.write_text("[1, 2]"),
     "run_flags.json: expected a JSON object, got list"),
    (lambda path: path.write_bytes(b'{"task": "\xff"}'),
     "run_flags.json: line 1 is not UTF-8 text"),
    (lambda path: path.write_text('{"lora_rank": null}'),
     'run_flags.json: names no task \\(a string under "task"\\)'),
    (lambda path: path.write_text('{"task": "glue", "lora_rank": "2"}'),
     "run_flags.json: lora_rank is a str, not a value of --lora_rank"),
    (lambda path: path.write_text('{"task": "glue", "lora_rank": true}'),
     "run_flags.json: lora_rank is a bool, not a value of --lora_rank"),
    (lambda path: path.write_text('{"task": "glue", "x": [[1]]}'),
     "run_flags.json: x is a list, not a value of --x"),
])
def test_a_flags_file_that_is_not_one_is_named(tmp_path, make, expected):
  output_dir = a_runs_directory(tmp_path / "output", None)
  make(output_dir / "run_flags.json")
  with within_seconds(10), pytest.raises(ValueError, match=expected):
    check(output_dir, {**SST2, "lora_rank": 2})
