"""BertSparseEncoder: SPLADE weights, encode, its prompts, max_active_dims
and decode against sentence-transformers' own outputs
(tests/fixtures/sparse_encoder), its .keras file, its sentence-transformers
folder and its refusals."""

import json
import logging
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from tests.support.helpers import tiny_config
from tests.support.sentence_transformers_folders import (
    SPARSE_ENCODERS, assert_as_sentence_transformers, expected, folder,
    opener)

# encode's methods, by the expected.npz key of their outputs.
ENCODINGS = {"embeddings": "encode", "embeddings_query": "encode_query",
             "embeddings_document": "encode_document"}


@pytest.fixture(scope="module")
def opened():
  return opener()


@pytest.fixture(scope="module")
def prompted(opened):
  """max pooling, relu, prompts "query" and "document"."""
  return opened("max_relu_prompts").model


def dense(embeddings):
  assert isinstance(embeddings, tf.SparseTensor)
  return tf.sparse.to_dense(embeddings).numpy()


@pytest.mark.parametrize("name", SPARSE_ENCODERS)
def test_a_sparse_encoder_folder_encodes_as_sentence_transformers(opened,
                                                                  name):
  """Both poolings and activations, the folder's prompts for encode_query
  and encode_document (never its default prompt), and its max_active_dims,
  in sentence-transformers 6's, 5's and the Hub's layouts."""
  model = opened(name).model
  assert isinstance(model, bert_tf.BertSparseEncoder)
  values = expected(name)
  for key, method in ENCODINGS.items():
    embeddings = getattr(model, method)(values["texts"])
    assert embeddings.dense_shape.numpy().tolist() == [10, 144]
    assert np.all(embeddings.values.numpy() != 0)
    assert_as_sentence_transformers(dense(embeddings), values[key])


def test_the_folders_settings(opened):
  settings = {name: (model.pooling_strategy, model.activation,
                     model.max_active_dims, model.similarity,
                     model.default_prompt_name, model.preprocessor
                     .max_seq_length)
              for name in SPARSE_ENCODERS
              for model in [opened(name).model]}
  assert settings == {
      "max_relu_prompts": ("max", "relu", None, "dot", None, 20),
      "sum_log1p_relu": ("sum", "log1p_relu", None, "cosine", None, 20),
      "max_active_dims": ("max", "relu", 6, "dot", "query", 20),
      "classic": ("max", "relu", None, "dot", None, 16)}


@pytest.mark.parametrize("name", ["max_relu_prompts", "sum_log1p_relu"])
def test_similarity_scores_as_sentence_transformers(opened, name):
  """By the folder's similarity (dot, cosine), of encode's sparse
  embeddings."""
  model = opened(name).model
  values = expected(name)
  embeddings = model.encode(values["texts"])
  assert_as_sentence_transformers(
      model.similarity_scores(embeddings, embeddings), values["similarity"])


def test_max_active_dims_keeps_each_rows_largest(opened):
  model = opened("max_active_dims").model
  values = expected("max_active_dims")
  top3 = dense(model.encode(values["texts"], max_active_dims=3))
  assert_as_sentence_transformers(top3, values["embeddings_top3"])
  assert (top3 != 0).sum(1).max() == 3


@pytest.mark.parametrize("name", ["max_relu_prompts", "max_active_dims"])
def test_decode_gives_sentence_transformers_tokens_and_weights(opened, name):
  """Of sentence-transformers' own embeddings (dense), and of encode's
  (sparse): with top_k, and all of them."""
  model = opened(name).model
  values = expected(name)
  with open(os.path.join(folder(name), "decode.json"),
            encoding="utf-8") as reader:
    theirs = json.load(reader)
  for embeddings in (values["embeddings"], model.encode(values["texts"])):
    for ours, key in ((model.decode(embeddings, top_k=3), "top_3"),
                      (model.decode(embeddings[:2] if isinstance(
                          embeddings, np.ndarray) else tf.sparse.slice(
                              embeddings, [0, 0], [2, 144])),
                       "all_first_two")):
      assert [[token for token, _ in row] for row in ours] == [
          [token for token, _ in row] for row in theirs[key]]
      np.testing.assert_allclose(
          [weight for row in ours for _, weight in row],
          [weight for row in theirs[key] for _, weight in row], atol=1e-5)
  one = model.decode(values["embeddings"][0], top_k=2)
  assert [token for token, _ in one] == [
      token for token, _ in theirs["top_3"][0][:2]]
  assert model.decode(np.zeros(144)) == []


def test_prompts_as_sentence_transformers_takes_them(prompted):
  values = expected("max_relu_prompts")
  texts = values["texts"]
  assert_as_sentence_transformers(
      dense(prompted.encode(texts, prompt_name="document")),
      values["embeddings_document"])
  assert_as_sentence_transformers(
      dense(prompted.encode_document(texts, prompt="query: ")),
      values["embeddings_query"])
  with pytest.raises(ValueError, match=r"prompt_name='passage' is not one "
                     r"of its prompts \(document, query\)"):
    prompted.encode(texts, prompt_name="passage")


def test_encode_keeps_the_texts_order_in_any_batch_size(prompted):
  values = expected("max_relu_prompts")
  assert_as_sentence_transformers(
      dense(prompted.encode(values["texts"], batch_size=3)),
      values["embeddings"])
  empty = prompted.encode([])
  assert empty.dense_shape.numpy().tolist() == [0, 144]


def test_the_model_gives_dense_embeddings_of_text_and_columns(prompted):
  values = expected("max_relu_prompts")
  texts = values["texts"][:3]
  embedding = prompted(texts)["embedding"]
  assert_as_sentence_transformers(embedding, values["embeddings"][:3])
  columns = prompted((texts[:2], texts[1:]))["embedding"]
  assert columns.shape == (2, 2, 144)
  assert_as_sentence_transformers(columns[:, 1], values["embeddings"][1:3])


def test_a_keras_file_keeps_its_settings_and_outputs(prompted, tmp_path):
  path = tmp_path / "sparse.keras"
  prompted.save(path)
  loaded = keras.saving.load_model(path)
  assert isinstance(loaded, bert_tf.BertSparseEncoder)
  assert loaded.get_config() == prompted.get_config()
  values = expected("max_relu_prompts")
  assert_as_sentence_transformers(dense(loaded.encode_query(values["texts"])),
                                  values["embeddings_query"])


def test_save_pretrained_writes_a_sparse_encoder_folder(opened, tmp_path):
  """As sentence-transformers 6 writes it (check_saved_folders.py there
  checks that sentence-transformers 5 and 6 load it with the same
  outputs); bert_tf reads it back with the same outputs."""
  model = opened("max_active_dims").model
  target = tmp_path / "saved"
  model.save_pretrained(target)

  def read(relative):
    with open(target / relative, encoding="utf-8") as reader:
      return json.load(reader)
  assert [module["type"] for module in read("modules.json")] == [
      "sentence_transformers.models.Transformer",
      "sentence_transformers.sparse_encoder.modules.splade_pooling"
      ".SpladePooling"]
  assert read("1_SpladePooling/config.json") == {
      "pooling_strategy": "max", "activation_function": "relu",
      "embedding_dimension": None}
  assert read("sentence_bert_config.json")["transformer_task"] == \
      "fill-mask"
  assert read("config.json")["architectures"] == ["BertForMaskedLM"]
  assert read("config_sentence_transformers.json") == {
      "model_type": "SparseEncoder",
      "prompts": {"document": "", "query": "q: "},
      "default_prompt_name": "query", "similarity_fn_name": "dot",
      "max_active_dims": 6}
  values = expected("max_active_dims")
  again = bert_tf.load_pretrained(str(target)).model
  for key, method in ENCODINGS.items():
    assert_as_sentence_transformers(
        dense(getattr(again, method)(values["texts"])), values[key])
  with pytest.raises(ValueError, match="format='huggingface' would leave "
                     "out its pooling"):
    model.save_pretrained(tmp_path / "plain", format="huggingface")


@pytest.mark.parametrize("arguments, message", [
    ({"pooling_strategy": "mean"}, "pooling_strategy='mean'; expected one "
     "of max, sum"),
    ({"activation": "gelu"}, "activation='gelu'; expected one of relu, "
     "log1p_relu"),
    ({"max_active_dims": 0}, "max_active_dims=0 must be an integer >= 1"),
    ({"max_active_dims": -1}, "max_active_dims=-1 must be"),
    ({"max_active_dims": True}, "max_active_dims=True must be"),
    ({"max_active_dims": 2.5}, "max_active_dims=2.5 must be"),
    ({"similarity": "cos_sim"}, "similarity='cos_sim'; expected one of"),
    ({"default_prompt_name": "passage"}, "default_prompt_name 'passage' is "
     "not one of the prompts"),
    ({"prompts": {"query": 5}}, r"prompts\['query'\]=5; expected a str"),
])
def test_arguments_are_refused_before_the_encoder_is_built(arguments,
                                                           message):
  with pytest.raises(ValueError, match="BertSparseEncoder: " + message):
    bert_tf.BertSparseEncoder(tiny_config(), **arguments)


def test_a_default_prompt_may_name_query_or_document_unset():
  """As sentence-transformers, whose SparseEncoder has both, "" unless
  set."""
  model = bert_tf.BertSparseEncoder(tiny_config(),
                                    default_prompt_name="document")
  assert model.prompt_of() == ""


@pytest.mark.parametrize("call, message", [
    (lambda model: model.decode(np.zeros(144), top_k=0),
     "top_k=0 must be an integer >= 1"),
    (lambda model: model.decode(np.zeros(144), top_k=True), "top_k=True"),
    (lambda model: model.decode(np.zeros((2, 3, 144))),
     r"embeddings are shaped \[2, 3, 144\]; expected \[n, 144\] or \[144\]"),
    (lambda model: model.decode(np.zeros(100)), r"shaped \[100\]"),
    (lambda model: model.decode(None), r"embeddings are shaped \[\]"),
    (lambda model: model.decode(["a"]), "embeddings are not an array of "
     "weights"),
    (lambda model: model.encode(["a"], max_active_dims=0),
     "max_active_dims=0 must be"),
    (lambda model: model.encode("a text"), "takes a list of texts"),
    (lambda model: model.encode([None]), r"texts\[0\] is None"),
])
def test_bad_calls_are_refused_in_one_line(prompted, call, message):
  with pytest.raises(ValueError, match=message) as error:
    call(prompted)
  assert "\n" not in str(error.value)


def test_a_folder_loads_without_warning_of_the_unused_pooler(caplog):
  """A BertForMaskedLM has no pooler; the encoder's, which the sparse
  encoder never uses, is frozen: no "start at random" warning."""
  with caplog.at_level(logging.WARNING):
    model = bert_tf.load_pretrained(folder("classic")).model
  assert not model.encoder.pooler.trainable
  assert "start at random" not in caplog.text
