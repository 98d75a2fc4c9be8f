"""The sentence-transformers folders of tests/fixtures/sentence_transformers
and tests/fixtures/sparse_encoder (written by sentence-transformers itself,
with its outputs in each expected.npz; see make_fixtures.py there), opened
once per test module."""

import functools
import json
import os
import re
import shutil

import numpy as np
import pytest

import bert_tf
from tests.support.helpers import PROJECT_DIR

FIXTURES_DIR = os.path.join(PROJECT_DIR, "tests", "fixtures",
                            "sentence_transformers")
EMBEDDERS = ("classic_cls_dense", "today_mean", "today_max",
             "today_mean_sqrt_len")
CROSS_ENCODERS = ("cross_encoder", "cross_encoder_identity",
                  "cross_encoder_nli", "cross_encoder_v4")
# The SparseEncoder folders of tests/fixtures/sparse_encoder.
SPARSE_FIXTURES_DIR = os.path.join(PROJECT_DIR, "tests", "fixtures",
                                   "sparse_encoder")
SPARSE_ENCODERS = ("max_relu_prompts", "sum_log1p_relu", "max_active_dims",
                   "classic")
# Inference-free SPLADE: a Router of static queries and SPLADE documents.
ROUTER = "router"


def folder(name):
  if name in (*SPARSE_ENCODERS, ROUTER):
    return os.path.join(SPARSE_FIXTURES_DIR, name)
  return os.path.join(FIXTURES_DIR, name)


@functools.cache
def expected(name):
  """A folder's expected.npz, as {name: numpy array}; texts as lists of
  str."""
  values = dict(np.load(os.path.join(folder(name), "expected.npz")))
  return {key: value.tolist() if value.dtype.kind == "U" else value
          for key, value in values.items()}


def opener():
  """load_pretrained of a fixture folder by name, each opened once: a
  module-scoped fixture returns one, so that each module loads each folder
  at most once."""
  return functools.cache(lambda name: bert_tf.load_pretrained(folder(name)))


def assert_as_sentence_transformers(ours, theirs):
  """Within 1e-5 of sentence-transformers' values, relative to the
  largest where that is over 1."""
  theirs = np.asarray(theirs)
  scale = max(1.0, float(np.abs(theirs).max()))
  assert np.shape(ours) == theirs.shape
  np.testing.assert_allclose(np.asarray(ours), theirs, rtol=0,
                             atol=1e-5 * scale)


def copied(tmp_path, name):
  """A copy of a fixture folder, to edit one of its files."""
  return shutil.copytree(folder(name), os.path.join(tmp_path, name))


def edit_json(path, edit):
  """Rewrites a JSON file after edit(values) changed it in place."""
  with open(path, encoding="utf-8") as reader:
    values = json.load(reader)
  edit(values)
  with open(path, "w", encoding="utf-8") as writer:
    json.dump(values, writer)


def assert_edit_refused_in_one_line(tmp_path, case):
  """case: (fixture folder, edit(directory), the file the message names
  relative to the copy ("" : the copy itself), the message's pattern
  after it). load_pretrained of the edited copy raises ValueError in one
  line naming that file."""
  name, edit, relative, message = case
  directory = copied(tmp_path, name)
  edit(directory)
  with pytest.raises(ValueError) as error:
    bert_tf.load_pretrained(directory)
  line = str(error.value)
  assert "\n" not in line and len(line) < 400
  named = os.path.join(directory, relative) if relative else directory
  assert re.match(re.escape(named) + ": " + message, line), line


def json_setter(relative, **fields):
  """An edit (for assert_edit_refused_in_one_line) setting fields of the
  JSON object in a folder's file."""
  return lambda directory: edit_json(os.path.join(directory, relative),
                                     lambda values: values.update(fields))


def modules_edit(edit):
  """An edit applying edit(entries) to a folder's modules.json."""
  return lambda directory: edit_json(os.path.join(directory, "modules.json"),
                                     edit)

