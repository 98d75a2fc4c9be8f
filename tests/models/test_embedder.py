"""BertEmbedder: pooling, Dense and Normalize as sentence-transformers
computes them, encode and its prompts against sentence-transformers' own
outputs (tests/fixtures/sentence_transformers), and the model's config,
.keras file and refusals."""

import os
import tracemalloc

import keras
import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from bert_tf.checkpoints.sentence_transformers.activations import (
    TORCH_ACTIVATIONS)
from bert_tf.layers.activations import HEAD_ACTIVATIONS
from bert_tf.models.embedder import SIMILARITIES
from bert_tf.models.predictor import Predictor
from tests.support.helpers import random_inputs, tiny_config
from tests.support.keras_harness import run_model_test
from tests.support.sentence_transformers_folders import (
    FIXTURES_DIR, assert_as_sentence_transformers, expected, folder, opener)

INPUT_NAMES = ("input_ids", "input_mask", "segment_ids")
EVERY_POOLING = ["cls", "max", "mean", "mean_sqrt_len_tokens",
                 "weightedmean"]
TWO_DENSE = [{"units": 8, "activation": "tanh"},
             {"units": 6, "activation": "linear", "use_bias": False}]


@pytest.fixture(scope="module")
def opened():
  return opener()


@pytest.fixture(scope="module")
def today_mean(opened):
  """mean pooling, Normalize, prompts "query" (the default) and
  "document"."""
  return opened("today_mean").model


def encoder_inputs(config):
  return {name: value for name, value in random_inputs(config).items()
          if name in INPUT_NAMES}


def pooled_by_hand(tokens, mask):
  """cls, max, mean, mean_sqrt_len_tokens and weightedmean (position
  weights 1, 2, ...) of [batch, seq, hidden] over the real tokens,
  concatenated."""
  rows = []
  for row, real in zip(tokens, mask.astype(bool)):
    kept = row[real]
    weights = np.arange(1, len(kept) + 1)[:, None]
    rows.append(np.concatenate([
        row[0], kept.max(0), kept.mean(0),
        kept.sum(0) / np.sqrt(len(kept)),
        (kept * weights).sum(0) / weights.sum()]))
  return np.array(rows)


def test_pooling_modes_dense_and_normalize_by_hand():
  """The modes concatenated in order, then each Dense with its activation,
  then the L2 norm; padding never pooled."""
  model = bert_tf.BertEmbedder(tiny_config(), pooling=EVERY_POOLING,
                               dense=TWO_DENSE, normalize=True)
  inputs = encoder_inputs(tiny_config())
  tokens = model.encoder(inputs)["sequence_output"].numpy()
  pooled = pooled_by_hand(tokens, inputs["input_mask"])
  (kernel, bias), (last,) = (layer.get_weights()
                             for layer in model.dense_layers)
  dense = np.tanh(pooled @ kernel + bias) @ last
  embedding = model(inputs)["embedding"].numpy()
  np.testing.assert_allclose(
      embedding, dense / np.linalg.norm(dense, axis=-1, keepdims=True),
      rtol=0, atol=1e-5)
  assert model.dimension == 6 and embedding.shape == (3, 6)
  plain = bert_tf.BertEmbedder(tiny_config(), pooling=EVERY_POOLING)
  plain.set_weights(model.encoder.get_weights())
  np.testing.assert_allclose(plain(inputs)["embedding"], pooled, rtol=0,
                             atol=1e-5)
  assert plain.dimension == 5 * 32


def test_a_tiny_embedder_passes_the_model_harness():
  """Config and .keras round trips, a checkpoint name for each Dense
  weight, mixed precision and int8."""
  config = tiny_config(num_hidden_layers=1)
  run_model_test(bert_tf.BertEmbedder(config, pooling=["cls", "mean"],
                                      dense=TWO_DENSE, normalize=True),
                 encoder_inputs(config))


@pytest.mark.parametrize("batch_size", [1, 3, 64])
def test_encode_batches_by_length_in_the_texts_order(today_mean, batch_size):
  """Batches are sorted by length; the embeddings come back in the
  texts' order, the default prompt ("query") applied."""
  values = expected("today_mean")
  assert_as_sentence_transformers(
      today_mean.encode(values["texts"], batch_size=batch_size),
      values["embeddings"])


@pytest.mark.parametrize("arguments, key", [
    ({"prompt_name": "document"}, "embeddings_document"),
    ({"prompt": ""}, "embeddings_no_prompt"),
    ({"prompt_name": "document", "prompt": ""}, "embeddings_no_prompt"),
])
def test_encode_takes_a_prompt(today_mean, arguments, key):
  values = expected("today_mean")
  assert_as_sentence_transformers(
      today_mean.encode(values["texts"], **arguments), values[key])


@pytest.mark.parametrize("truncate_dim, key", [
    (None, "embeddings"), (32, "embeddings_full"), (8, "embeddings_8")])
def test_weightedmean_and_a_saved_truncate_dim(opened, truncate_dim, key):
  """The folder's truncate_dim (16) cuts the normalised embeddings, which
  are not normalised again; encode's truncate_dim overrides it."""
  model = opened("today_weightedmean").model
  assert (model.pooling, model.truncate_dim) == (["weightedmean"], 16)
  values = expected("today_weightedmean")
  assert_as_sentence_transformers(
      model.encode(values["texts"], truncate_dim=truncate_dim), values[key])


@pytest.mark.parametrize("arguments, key", [
    ({}, "embeddings"), ({"prompt_name": "blank"}, "embeddings_blank"),
    ({"prompt_name": "long"}, "embeddings_long"),
    ({"prompt": ""}, "embeddings_no_prompt")])
def test_include_prompt_false_pools_the_text_alone(opened, arguments, key):
  """[CLS] and the prompt's word pieces are left out: " " has none
  ([CLS] alone), the long prompt fills the max length ([SEP] alone); no
  prompt ("") leaves out nothing."""
  model = opened("today_include_prompt").model
  assert model.include_prompt is False
  values = expected("today_include_prompt")
  assert_as_sentence_transformers(model.encode(values["texts"], **arguments),
                                  values[key])


def test_every_mode_leaves_the_prompt_out():
  """cls takes the first token after the prompt (position 0 where none
  is left), max and the means pool what is left, weightedmean keeps each
  token's weight by position."""
  values = expected("today_include_prompt")
  model = bert_tf.load_pretrained(folder("today_include_prompt"),
                                  pooling=values["every_mode"]).model
  for prompt_name, key in ((None, "embeddings_every_mode"),
                           ("long", "embeddings_every_mode_long")):
    assert_as_sentence_transformers(
        model.encode(values["texts"], prompt_name=prompt_name), values[key])


@pytest.mark.parametrize("arguments, message", [
    ({"batch_size": 0}, ".encode: batch_size=0 must be an integer >= 1"),
    ({"batch_size": -1}, ".encode: batch_size=-1 must be"),
    ({"batch_size": 2.5}, ".encode: batch_size=2.5 must be"),
    ({"batch_size": "8"}, ".encode: batch_size='8' must be"),
    ({"batch_size": True}, ".encode: batch_size=True must be"),
    ({"texts": None}, ".encode: texts is None; expected a list of texts"),
    ({"texts": 5}, ".encode: texts is int; expected a list of texts"),
    ({"texts": {"a": 1}}, ".encode: texts is dict"),
    ({"texts": "a text"}, ".encode takes a list of texts, not one string"),
    ({"texts": np.array("a text")}, ".encode takes a list of texts, not one"),
    ({"texts": ["a text", 3]}, r".encode: texts\[1\] is int; expected a "
                               "str"),
    ({"texts": ["a", "b", None]}, r".encode: texts\[2\] is None"),
    ({"texts": ["a", b"caf\xe9"]}, r".encode: texts\[1\] is bytes that "
                                   "are not UTF-8"),
    ({"texts": ["\ud800"]}, r".encode: texts\[0\] holds a lone surrogate"),
    ({"prompt": 5}, ": prompt=5; expected a str"),
    ({"prompt": b"query: "}, ": prompt=b'query: '; expected a str"),
    ({"prompt_name": "passage"}, ": prompt_name='passage' is not one of its "
                                 r"prompts \(document, query\)"),
    ({"prompt_name": ["query"]}, r": prompt_name=\['query'\] is not one"),
    ({"truncate_dim": 0}, ".encode: truncate_dim=0 must be an integer from 1 "
                          "to the embedding's 32 dimensions"),
    ({"truncate_dim": 33}, ".encode: truncate_dim=33 must be"),
    ({"truncate_dim": -1}, ".encode: truncate_dim=-1 must be"),
    ({"truncate_dim": False}, ".encode: truncate_dim=False must be"),
    ({"truncate_dim": 8.5}, ".encode: truncate_dim=8.5 must be"),
])
def test_what_encode_refuses(today_mean, arguments, message):
  """Each argument checked before any work, in one line naming it."""
  arguments = {"texts": ["a text"], **arguments}
  with pytest.raises(ValueError, match="^BertEmbedder" + message) as error:
    today_mean.encode(**arguments)
  assert "\n" not in str(error.value)


def test_encode_takes_any_list_of_texts_and_nothing(today_mean):
  """str, UTF-8 bytes, a numpy or string tensor, a generator; nothing
  gives [0, dim]."""
  texts = expected("today_mean")["texts"][:3]
  embeddings = today_mean.encode(texts)
  for same in ([text.encode("utf-8") for text in texts], np.array(texts),
               tf.constant(texts), (text for text in texts)):
    np.testing.assert_allclose(today_mean.encode(same), embeddings,
                               rtol=0, atol=1e-6)
  nothing = today_mean.encode([])
  assert nothing.shape == (0, 32) and nothing.dtype == np.float32
  assert today_mean.encode([], truncate_dim=np.int64(8)).shape == (0, 8)


def test_a_batch_holds_at_most_the_texts_given(monkeypatch):
  """Two texts run as a batch of two whatever batch_size says: a batch
  of 10**9 allocates nothing more."""
  model = bert_tf.load_pretrained(folder("today_mean")).model
  rows = []
  distributed = Predictor._distributed

  def recorded_distributed(self, batch):
    features = distributed(self, batch)
    rows.append(features["input_ids"].shape[0])
    return features

  monkeypatch.setattr(Predictor, "_distributed", recorded_distributed)
  texts = expected("today_mean")["texts"][:2]
  embeddings = model.encode(texts, batch_size=1000)
  assert rows == [2]
  np.testing.assert_allclose(model.encode(texts, batch_size=10**9),
                             embeddings, rtol=0, atol=1e-6)


def test_a_keras_file_keeps_the_settings_and_embeddings(opened, tmp_path):
  """A folder's embedder with a Dense (and prompts and a similarity given
  here), saved as .keras and loaded without its folder."""
  model = bert_tf.load_pretrained(
      folder("classic_cls_dense"), prompts={"query": "query: "},
      default_prompt_name="query", similarity="dot", truncate_dim=8,
      include_prompt=False).model
  path = str(tmp_path / "embedder.keras")
  model.save(path)
  loaded = keras.saving.load_model(path)
  assert type(loaded) is bert_tf.BertEmbedder
  assert loaded.get_config() == model.get_config()
  settings = ("pooling", "dense", "normalize", "prompts",
              "default_prompt_name", "similarity", "truncate_dim",
              "include_prompt")
  assert {name: getattr(loaded, name) for name in settings} == {
      "pooling": ["cls"], "normalize": True,
      "dense": [{"units": 16, "activation": "tanh", "use_bias": True}],
      "prompts": {"query": "query: "}, "default_prompt_name": "query",
      "similarity": "dot", "truncate_dim": 8, "include_prompt": False}
  texts = expected("classic_cls_dense")["texts"]
  np.testing.assert_array_equal(loaded.encode(texts), model.encode(texts))
  assert loaded.encode(texts).shape == (len(texts), 8)
  assert_as_sentence_transformers(
      loaded.encode(texts, prompt="", truncate_dim=16),
      expected("classic_cls_dense")["embeddings"])
  assert loaded.preprocessor.max_seq_length == 16


def test_from_config_gives_the_same_model(today_mean):
  clone = bert_tf.BertEmbedder.from_config(today_mean.get_config())
  assert clone.get_config() == today_mean.get_config()
  assert clone.preprocessor.tokenization_rules == "transformers"
  clone.set_weights(today_mean.get_weights())
  inputs = today_mean.preprocessor(expected("today_mean")["texts"])
  np.testing.assert_array_equal(clone(inputs)["embedding"],
                                today_mean(inputs)["embedding"])


@pytest.mark.parametrize("arguments, message", [
    ({"pooling": "lasttoken"}, "pooling mode 'lasttoken' pools a decoder's "
                               "last token"),
    ({"truncate_dim": 0}, "truncate_dim=0 must be an integer from 1 to the "
                          "embedding's 32 dimensions"),
    ({"truncate_dim": 33}, "truncate_dim=33 must be"),
    ({"truncate_dim": 9, "dense": [{"units": 8}]}, "truncate_dim=9 must be an "
                                                   "integer from 1 to the "
                                                   "embedding's 8"),
    ({"truncate_dim": True}, "truncate_dim=True must be"),
    ({"truncate_dim": 8.0}, "truncate_dim=8.0 must be"),
    ({"truncate_dim": "8"}, "truncate_dim='8' must be"),
    ({"include_prompt": "false"}, "include_prompt='false'; expected True or "
                                  "False"),
    ({"pooling": []}, "pooling"),
    ({"dense": [{"units": 0}]}, r"dense\[0\]: units=0 must be an integer"),
    ({"dense": [{"units": True}]}, r"dense\[0\]: units=True"),
    ({"dense": [{"units": 4}, 4]}, r"dense\[1\] is 4; expected a dict"),
    ({"dense": [{"units": 4, "act": "tanh"}]}, r"dense\[0\] is \{"),
    ({"default_prompt_name": "query"}, "default_prompt_name 'query' is not "
                                       r"one of the prompts \(none\)"),
    ({"prompts": {"query": "q: "}, "default_prompt_name": "document"},
     r"default_prompt_name 'document' is not one of the prompts \(query\)"),
    ({"similarity": "cos"}, "similarity='cos'; expected one of cosine, dot, "
                            "euclidean, manhattan"),
    ({"prompts": {"query": 5}}, r"prompts\['query'\]=5; expected a str"),
    ({"prompts": {5: "q: "}}, "prompts has a name 5; expected a str"),
    ({"prompts": {"query": "\ud800"}}, r"prompts\['query'\] holds a lone "
                                       "surrogate"),
])
def test_the_constructor_refuses_what_it_cannot_build(arguments, message):
  with pytest.raises(ValueError, match="^BertEmbedder: " + message) as error:
    bert_tf.BertEmbedder(tiny_config(), **arguments)
  assert "\n" not in str(error.value)


@pytest.mark.parametrize("activation", ["softplus", "gelu"])
def test_a_dense_activation_without_a_torch_twin_is_refused(activation):
  """Only the activations a sentence-transformers Dense module can name."""
  with pytest.raises(ValueError, match=r"^BertEmbedder: dense\[0\]: "
                                       f"activation={activation!r}"):
    bert_tf.BertEmbedder(tiny_config(), dense=[{"units": 4,
                                                "activation": activation}])


SIMILARITY_FIXTURE = os.path.join(FIXTURES_DIR, "similarity.npz")


def embedder_of(similarity):
  return bert_tf.BertEmbedder(tiny_config(num_hidden_layers=1),
                              similarity=similarity)


@pytest.mark.parametrize("similarity", SIMILARITIES)
def test_similarity_scores_as_sentence_transformers(similarity):
  """Cosine, dot, minus the euclidean and minus the manhattan distance of
  embeddings and of their near and exact duplicates, [len(first),
  len(second)]; two 1-D vectors give [[s]], one and a set [1, m]
  (make_similarity.py)."""
  values = np.load(SIMILARITY_FIXTURE)
  scores = embedder_of(similarity).similarity_scores
  first, second = values["first"], values["second"]
  for ours, key in [(scores(first, second), "scores"),
                    (scores(first[0], second[0]), "single"),
                    (scores(first[0], second), "row")]:
    assert_as_sentence_transformers(ours, values[f"{key}_{similarity}"])
  assert scores(first, second[0]).shape == (10, 1)


@pytest.mark.parametrize("similarity", ["euclidean", "manhattan"])
def test_distances_are_exact_and_bounded_in_memory(similarity):
  """Beyond the rows where torch.cdist is exact, the distances of near
  duplicates are still those of float64 differences; the [n, m, dim]
  differences are never held at once (here 150 MB of them)."""
  rng = np.random.default_rng(0)
  first = rng.normal(size=(320, 384)).astype(np.float32)
  second = np.concatenate([first[:200] + 1e-5 * rng.normal(
      size=(200, 384)), first[200:]]).astype(np.float32)
  tracemalloc.start()
  try:
    scores = embedder_of(similarity).similarity_scores(first, second)
    peak = tracemalloc.get_traced_memory()[1]
  finally:
    tracemalloc.stop()
  assert peak < 20 * scores.nbytes
  differences = first.astype(np.float64)[:, None] - second[None]
  order = 2 if similarity == "euclidean" else 1
  np.testing.assert_allclose(
      scores, -np.linalg.norm(differences, ord=order, axis=-1), rtol=1e-6,
      atol=1e-6)


@pytest.mark.parametrize("first, second, message", [
    (np.ones((2, 4)), np.ones((3, 5)), "first has 4 dimensions, second 5"),
    (np.ones((2, 3, 4)), np.ones(4), r"first has shape \(2, 3, 4\)"),
    (np.ones(4), 5.0, r"second has shape \(\)"),
    (np.ones(4), ["a", "b"], "second has shape .* dtype <U1"),
    ([[1.0, 2.0], [3.0]], np.ones(2), "first is not an array of embeddings"),
])
def test_what_similarity_scores_refuses(first, second, message):
  with pytest.raises(ValueError, match="^BertEmbedder.similarity_scores: "
                                       + message) as error:
    embedder_of("euclidean").similarity_scores(first, second)
  assert "\n" not in str(error.value)


def test_an_embedder_folder_still_gives_its_plain_encoder(opened):
  """load_pretrained(folder, BertEncoder): the encoder's weights, the Dense
  module's reported unused."""
  encoder = bert_tf.load_pretrained(folder("classic_cls_dense"),
                                    bert_tf.BertEncoder)
  assert type(encoder.model) is bert_tf.BertEncoder
  assert encoder.load_report.not_in_checkpoint == []
  assert sorted(encoder.load_report.unused) == [
      "embedding/dense_0/bias", "embedding/dense_0/kernel"]
  embedder = opened("classic_cls_dense").model
  for ours, theirs in zip(encoder.model.weights, embedder.encoder.weights,
                          strict=True):
    np.testing.assert_array_equal(ours, theirs)


def test_an_embedder_without_a_preprocessor_cannot_encode():
  model = bert_tf.BertEmbedder(tiny_config(num_hidden_layers=1))
  with pytest.raises(ValueError, match="^BertEmbedder.encode: the model has "
                                       "no preprocessor"):
    model.encode(["a text"])


def test_every_activation_sentence_transformers_records_is_computed():
  """The torch activations the reader maps are the ones the heads compute
  (their names in two modules, one of which imports no TensorFlow)."""
  assert sorted(TORCH_ACTIVATIONS) == sorted(HEAD_ACTIVATIONS)
