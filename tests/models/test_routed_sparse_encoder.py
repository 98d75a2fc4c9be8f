"""BertRoutedSparseEncoder: inference-free SPLADE (a sentence-transformers
Router of SparseStaticEmbedding queries and SPLADE documents) against
sentence-transformers' own outputs (tests/fixtures/sparse_encoder/router),
its .keras file, the Router folder it saves, and its refusals."""

import json
import os
import pathlib

import keras
import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from bert_tf.checkpoints import directory_writer
from tests.support.helpers import tiny_config
from tests.support.sentence_transformers_folders import (
    ROUTER, assert_as_sentence_transformers, expected, folder)


@pytest.fixture(scope="module")
def routed():
  return bert_tf.load_pretrained(folder(ROUTER)).model


def dense(embeddings):
  assert isinstance(embeddings, tf.SparseTensor)
  return tf.sparse.to_dense(embeddings).numpy()


def test_a_router_folder_encodes_as_sentence_transformers(routed):
  """Queries by their tokens' static weights (no [CLS] or [SEP], the
  query route's own max length, the "query" prompt), documents and encode
  (the default route) through SPLADE."""
  assert isinstance(routed, bert_tf.BertRoutedSparseEncoder)
  assert (routed.query_max_length, routed.default_route,
          routed.preprocessor.max_seq_length) == (64, "document", 20)
  values = expected(ROUTER)
  texts = values["texts"]
  for key, method in (("embeddings", routed.encode),
                      ("embeddings_query", routed.encode_query),
                      ("embeddings_document", routed.encode_document)):
    assert_as_sentence_transformers(dense(method(texts)), values[key])
  with open(os.path.join(folder(ROUTER), "decode.json"),
            encoding="utf-8") as reader:
    theirs = json.load(reader)["top_3"]
  ours = routed.decode(values["embeddings"], top_k=3)
  assert [[token for token, _ in row] for row in ours] == [
      [token for token, _ in row] for row in theirs]


def test_max_active_dims_and_batches_on_the_query_route(routed):
  values = expected(ROUTER)
  top2 = dense(routed.encode_query(values["texts"], batch_size=3,
                                   max_active_dims=2))
  theirs = values["embeddings_query"]
  assert (top2 != 0).sum(1).tolist() == np.minimum(
      (theirs != 0).sum(1), 2).tolist()
  np.testing.assert_array_equal(top2.max(1), theirs.max(1))


def test_a_keras_file_keeps_both_routes(routed, tmp_path):
  path = tmp_path / "routed.keras"
  routed.save(path)
  loaded = keras.saving.load_model(path)
  assert loaded.get_config() == routed.get_config()
  values = expected(ROUTER)
  assert_as_sentence_transformers(
      dense(loaded.encode_query(values["texts"])), values["embeddings_query"])


def saved_files(directory):
  """The files of a folder, by their paths inside it."""
  return sorted(str(path.relative_to(directory))
                for path in pathlib.Path(directory).rglob("*")
                if path.is_file())


def settings(model):
  """A model's config and its preprocessor's, without their names."""
  config = {**model.get_config(), "name": None}
  config["preprocessor"] = {**config["preprocessor"]["config"], "name": None}
  return config


def read_json(path):
  with open(path, encoding="utf-8") as reader:
    return json.load(reader)


def test_save_pretrained_writes_the_router_folder_sentence_transformers_does(
    routed, tmp_path):
  """Its files and router_config.json as sentence-transformers 6 saves
  the fixture (check_saved_folders.py there checks that it loads ours with
  the same outputs); bert_tf reads it back with the same outputs and
  settings, into an existing empty directory too."""
  target = tmp_path / "saved"
  target.mkdir()
  routed.save_pretrained(target)
  theirs = [name for name in saved_files(folder(ROUTER))
            if name not in ("expected.npz", "decode.json")]
  assert saved_files(target) == theirs
  assert read_json(target / "router_config.json") == read_json(
      os.path.join(folder(ROUTER), "router_config.json"))
  assert read_json(target / "modules.json") == read_json(
      os.path.join(folder(ROUTER), "modules.json"))
  again = bert_tf.load_pretrained(str(target)).model
  assert settings(again) == settings(routed)
  values = expected(ROUTER)
  for key, method in (("embeddings_query", again.encode_query),
                      ("embeddings_document", again.encode_document)):
    assert_as_sentence_transformers(dense(method(values["texts"])),
                                    values[key])


def test_a_router_without_a_default_route_saves_none(routed, tmp_path):
  """router_config.json without a default route nor the first route taken
  for it (allow_empty_key false), as sentence-transformers reads it; and
  no max length for the query route where the model has none."""
  routed.default_route, routed.query_max_length = None, None
  try:
    routed.save_pretrained(tmp_path / "saved")
  finally:
    routed.default_route, routed.query_max_length = "document", 64
  assert read_json(tmp_path / "saved" / "router_config.json")[
      "parameters"] == {"default_route": None, "allow_empty_key": False,
                        "route_mappings": {}}
  again = bert_tf.load_pretrained(str(tmp_path / "saved")).model
  assert (again.default_route, again.query_max_length) == (None, None)


def test_a_save_is_written_whole_or_not_at_all(routed, tmp_path,
                                               monkeypatch):
  """A folder that holds anything is refused, untouched; a save that
  fails midway (here writing the query route's tokenizer) leaves no new
  directory, and an existing empty one empty."""
  taken = tmp_path / "taken"
  taken.mkdir()
  (taken / "notes.txt").write_text("the user's")
  with pytest.raises(ValueError, match="directory=.* already holds "
                     "notes.txt"):
    routed.save_pretrained(taken)
  assert saved_files(taken) == ["notes.txt"]

  def fail(*_):
    raise OSError("disk full")
  monkeypatch.setattr(directory_writer, "_write_tokenizer", fail)
  empty = tmp_path / "empty"
  empty.mkdir()
  for target in (tmp_path / "new", empty):
    with pytest.raises(OSError, match="disk full"):
      routed.save_pretrained(target)
  assert not (tmp_path / "new").exists() and not os.listdir(empty)


@pytest.mark.parametrize("directory", [None, b"/tmp/saved", 3])
def test_a_directory_that_is_no_path_is_refused(routed, directory):
  with pytest.raises(TypeError, match=r"BertRoutedSparseEncoder"
                     r"\.save_pretrained: directory=.*; expected a path"):
    routed.save_pretrained(directory)


def test_encode_without_a_default_route_is_refused(routed):
  routed.default_route = None
  try:
    with pytest.raises(ValueError, match="BertRoutedSparseEncoder.encode: "
                       "the model has no default route"):
      routed.encode(["a text"])
    assert dense(routed.encode_query(["lake"])).shape == (1, 144)
  finally:
    routed.default_route = "document"


@pytest.mark.parametrize("arguments, message", [
    ({"default_route": "passage"}, "default_route='passage'; expected one "
     "of query, document, or None"),
    ({"query_max_length": 0}, "query_max_length=0 must be an integer >= 1"),
])
def test_arguments_are_refused(arguments, message):
  with pytest.raises(ValueError, match="BertRoutedSparseEncoder: " +
                     message):
    bert_tf.BertRoutedSparseEncoder(tiny_config(), **arguments)
