"""How the run scripts start: quietly, and refusing bad flags before
TensorFlow is imported."""

import ast
import os
import re

import pytest

from tests.support.helpers import PROJECT_DIR, run_script
from tests.test_imports import refused_without_tensorflow

# A line of TensorFlow's start-up, in 2.20's format ("2026-12-03
# 12:49:51.897468: I external/.../cudart_stub.cc:31] ...") or 2.21's
# ("I0000 00:00:1796322886.970923 11296 port.cc:153] ..."), or absl's
# note before such lines.
_TENSORFLOW_LOG_LINE = re.compile(
    r"^(?:\S+ \S+: )?[IWEF]\S* .*\.cc:\d+\] .*$|absl::InitializeLog",
    re.MULTILINE)
_START_UP_WORDS = ("oneDNN custom operations", "Could not find cuda drivers",
                   "cuda_", "This TensorFlow binary is optimized",
                   "absl::InitializeLog", "E0000", "W0000", "I0000")


def test_tensorflow_start_up_lines_are_silenced_unless_asked_for(
    tmp_path, monkeypatch):
  """A run's stderr is what its user needs: a refusal after TensorFlow is
  imported ends it, TensorFlow's C++ start-up lines (no CUDA
  driver, CPU instructions, oneDNN, absl's early lines on 2.21) only with
  --verbosity or TF_CPP_MIN_LOG_LEVEL below 3."""
  # Not inherited from a module this test process imported.
  monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL", raising=False)
  # --train_batch_size is checked by the runner, after TensorFlow starts.
  flag_values = {"data_dir": tmp_path, "output_dir": tmp_path / "out",
                 "do_train": True, "train_batch_size": 0}
  quiet = run_script("run_swag.py", flag_values)
  verbose = run_script("run_swag.py", {**flag_values, "verbosity": 1})
  chosen = run_script("run_swag.py", flag_values,
                      env={"TF_CPP_MIN_LOG_LEVEL": "0"})
  refusal = "run_swag: --train_batch_size=0: must be at least 1"
  assert quiet.stderr.splitlines()[-1] == refusal
  assert not _TENSORFLOW_LOG_LINE.search(quiet.stderr), quiet.stderr
  assert not any(word in quiet.stderr for word in _START_UP_WORDS)
  for result in (verbose, chosen):
    assert refusal in result.stderr
    assert _TENSORFLOW_LOG_LINE.search(result.stderr), result.stderr


# Refused before TensorFlow is imported: the same on every TensorFlow; one
# leg of CI runs it.
@pytest.mark.parametrize("script, cases, expected", [
    ("run_pretraining.py", [{"input_file": "x", "output_dir": "y",
                             "iterations_per_loop": 0}],
     ["run_pretraining: --iterations_per_loop=0: must be at least 1"]),
    ("run_ner.py", [{"data_dir": "x", "output_dir": "y", "dtype": "int8"},
                    {"data_dir": "x", "output_dir": "y", "bogus": 1}],
     ["--dtype=int8: value should be one of <float32|bfloat16|float16>",
      "Unknown command line flag 'bogus'"]),
    ("extract_features.py", [{"init_checkpoint": "x", "pooling": "median"}],
     ["--pooling=median: value should be one of "
      "<cls|mean|max|mean_sqrt_len|weightedmean>"]),
])
@pytest.mark.rerun
def test_bad_flags_are_refused_before_tensorflow_is_imported(
    script, cases, expected):
  """A mistyped command line is answered at once (well under a second),
  not after TensorFlow's import (about four)."""
  messages = refused_without_tensorflow(script, cases)
  for message, part in zip(messages, expected):
    assert part in message, message


def _script_constant(script, name):
  """The value a run script assigns to `name`, read from its source."""
  with open(os.path.join(PROJECT_DIR, "run_scripts", script),
            encoding="utf-8") as reader:
    tree = ast.parse(reader.read())
  for node in tree.body:
    if isinstance(node, ast.Assign) and \
        [target.id for target in node.targets] == [name]:
      return ast.literal_eval(node.value)
  raise AssertionError(f"{script} assigns no {name}")


def test_the_scripts_flag_choices_are_the_librarys():
  """The choices the scripts name so that their flags parse without
  TensorFlow are those the library runs."""
  # pylint: disable=import-outside-toplevel
  from bert_tf.extraction import embeddings, extraction
  from bert_tf.layers import layer_combination
  from bert_tf.optimization import optimizers, precision
  from bert_tf.tasks.squad import serving
  from bert_tf.training import distribution
  assert [_script_constant(script, name) for script, name in [
      ("model_flags.py", "STRATEGIES"), ("model_flags.py", "DTYPES"),
      ("training_flags.py", "OPTIMIZERS"), ("run_ner.py", "FEATURE_CHOICES"),
      ("run_squad.py", "MAX_SERVING_CONTEXT_LENGTH"),
      ("extract_features.py", "DEFAULT_LAYERS"),
      ("extract_features.py", "DEFAULT_MAX_SEQ_LENGTH"),
      ("extract_features.py", "POOLINGS")]] == [
          tuple(distribution.STRATEGIES), tuple(precision.POLICIES),
          tuple(optimizers.OPTIMIZERS),
          tuple(layer_combination.FEATURE_CHOICES),
          serving.MAX_SERVING_CONTEXT_LENGTH, extraction.DEFAULT_LAYERS,
          extraction.DEFAULT_MAX_SEQ_LENGTH, tuple(embeddings.POOLINGS)]
