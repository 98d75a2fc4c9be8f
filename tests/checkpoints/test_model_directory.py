"""A model directory is opened once, by the one module that asks what kind
it is, and no file of it is read twice: loaded as a model, started from by
a run, extracted from, converted."""

import ast
import os
import subprocess
import sys

import pytest

import bert_tf
from bert_tf.checkpoints import loading
from bert_tf.checkpoints.model_directory import (HUGGINGFACE, ORIGINAL,
                                                 SENTENCE_TRANSFORMERS,
                                                 ModelDirectory,
                                                 open_model_directory)
from bert_tf.runs import run_setup
from tests.support import sentence_transformers_folders
from tests.support.helpers import PROJECT_DIR, SHARED_DIR
from tests.support.read_counts import counted_reads, counts_over_one

FIXTURES = os.path.join(PROJECT_DIR, "tests", "fixtures")
TRANSFORMERS5 = os.path.join(FIXTURES, "huggingface",
                             "transformers5_classifier")
COMMUNITY = os.path.join(FIXTURES, "community_checkpoint", "biobert_style")
PRETRAINING = os.path.join(SHARED_DIR, "reference", "huggingface",
                           "bert_for_pretraining")
EMBEDDER = sentence_transformers_folders.folder("classic_cls_dense")
CROSS_ENCODER = sentence_transformers_folders.folder("cross_encoder")
# A SparseEncoder's Router: its modules' folders, a static route's weights
# and tokenizer files beside the BERT's.
ROUTER = sentence_transformers_folders.folder(
    sentence_transformers_folders.ROUTER)
DIRECTORIES = {
    "community TF1": COMMUNITY, "transformers 5": TRANSFORMERS5,
    "pretraining": pytest.param(PRETRAINING, marks=pytest.mark.shared),
    "embedder": EMBEDDER, "cross-encoder": CROSS_ENCODER,
    "sparse encoder router": ROUTER}


def read_once(directory, work):
  """work()'s result; asserts it read no file of `directory` twice."""
  with counted_reads(directory) as counts:
    result = work()
  assert counts, f"nothing of {directory} was read"
  assert not counts_over_one(counts)
  return result


@pytest.mark.parametrize("directory", DIRECTORIES.values(),
                         ids=DIRECTORIES.keys())
def test_load_pretrained_reads_each_file_once(directory):
  read_once(directory, lambda: bert_tf.load_pretrained(directory))


@pytest.mark.parametrize("directory", [COMMUNITY, TRANSFORMERS5, EMBEDDER],
                         ids=["community TF1", "transformers 5", "embedder"])
def test_a_run_reads_its_init_checkpoint_once(directory):
  """A run resolves its model from --init_checkpoint, writes the model's
  files into its output directory and starts from its weights."""

  def run():
    model = run_setup.resolve_run_model(directory, None, None, None, 16)
    run_setup.model_files(model)
    encoder = bert_tf.BertEncoder(model.config)
    return loading.load_checkpoint(encoder, model.source)

  assert read_once(directory, run).loaded


# The programs' reads are the same on every TensorFlow version: one leg of
# CI runs them.
@pytest.mark.rerun
def test_extract_features_reads_a_folder_once(tmp_path):
  lines = tmp_path / "lines.txt"
  lines.write_text("a first line\nand another one\n")
  result = _run_counted("extract_features.py", EMBEDDER, {
      "input_file": lines, "output_file": tmp_path / "out.jsonl",
      "init_checkpoint": EMBEDDER, "batch_size": 2})
  assert result == "[]"


@pytest.mark.rerun
def test_conversion_reads_a_folder_once(tmp_path):
  opened = open_model_directory(TRANSFORMERS5, stored_dtypes=True)
  with counted_reads(TRANSFORMERS5) as counts:
    bert_tf.conversion.convert(opened, str(tmp_path / "original"),
                               ORIGINAL)
  assert all(what.endswith("tensor") for what, *_ in counts)
  assert not counts_over_one(counts)
  assert _run_counted("convert_checkpoint.py", EMBEDDER, {
      "input_dir": EMBEDDER, "output_dir": tmp_path / "out",
      "output_format": "huggingface"}) == "[]"


def _run_counted(script, directory, flags):
  """The reads over one (JSON) of run_scripts/<script> under
  read_counts.py."""
  result = subprocess.run(
      [sys.executable, os.path.join(PROJECT_DIR, "tests", "support",
                                    "read_counts.py"), directory,
       os.path.join(PROJECT_DIR, "run_scripts", script),
       *(f"--{name}={value}" for name, value in flags.items())],
      capture_output=True, text=True, timeout=600, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  return result.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("directory, layout, weights_format", [
    (TRANSFORMERS5, HUGGINGFACE, HUGGINGFACE),
    (EMBEDDER, SENTENCE_TRANSFORMERS, HUGGINGFACE),
    (CROSS_ENCODER, SENTENCE_TRANSFORMERS, HUGGINGFACE),
    (COMMUNITY, ORIGINAL, ORIGINAL)])
def test_a_directory_is_typed_by_its_layout_and_format(directory, layout,
                                                       weights_format,
                                                       tmp_path):
  opened = open_model_directory(directory)
  assert (opened.layout, opened.format) == (layout, weights_format)
  assert opened.directory == directory
  # Whatever takes a directory takes one opened already, reading nothing.
  with counted_reads(directory) as counts:
    assert open_model_directory(opened) is opened
    assert bert_tf.load_pretrained(opened).config == opened.config
    assert bert_tf.BertEncoder.from_pretrained(opened).config == \
        opened.config
    assert loading.load_checkpoint(bert_tf.BertEncoder(opened.config),
                                   opened).loaded
  assert all(what.endswith("tensor") for what, *_ in counts)


def test_records_are_built_with_keywords():
  positional = (EMBEDDER, EMBEDDER, HUGGINGFACE, HUGGINGFACE, None, None,
                None, "BertModel", [])
  with pytest.raises(TypeError):
    ModelDirectory(*positional)


# The functions that ask what kind of directory a path is, and the one
# module that may call them.
_KIND_QUESTIONS = ("is_folder", "read_pipeline", "resolve_checkpoint_path")
_ASKER = os.path.join("bert_tf", "checkpoints", "model_directory.py")


def _calls(path):
  tree = ast.parse(open(path, encoding="utf-8").read())
  for node in ast.walk(tree):
    if isinstance(node, ast.Call):
      function = node.func
      name = function.attr if isinstance(function, ast.Attribute) else \
          getattr(function, "id", None)
      yield name, node.lineno


def _modules(*top):
  for directory, _, names in os.walk(os.path.join(PROJECT_DIR, *top)):
    for name in names:
      if name.endswith(".py"):
        yield os.path.join(directory, name)


def test_no_other_module_asks_what_kind_a_path_is():
  askers = [
      f"{os.path.relpath(path, PROJECT_DIR)}:{line} {name}"
      for path in [*_modules("bert_tf"), *_modules("run_scripts")]
      if not path.endswith(_ASKER)
      for name, line in _calls(path) if name in _KIND_QUESTIONS]
  assert not askers


def test_no_format_imports_another_formats_code():
  formats = ("original", "huggingface", "sentence_transformers")
  found = []
  for own in formats:
    for path in _modules("bert_tf", "checkpoints", own):
      tree = ast.parse(open(path, encoding="utf-8").read())
      for node in ast.walk(tree):
        names = [node.module or ""] if isinstance(node, ast.ImportFrom) \
            else [alias.name for alias in node.names] \
            if isinstance(node, ast.Import) else []
        names += [f"{node.module}.{alias.name}" for alias in node.names] \
            if isinstance(node, ast.ImportFrom) else []
        found += [f"{os.path.relpath(path, PROJECT_DIR)} imports {name}"
                  for name in names for other in formats if other != own
                  and name.startswith(f"bert_tf.checkpoints.{other}")]
  assert not found
