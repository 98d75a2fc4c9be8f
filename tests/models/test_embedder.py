"""BertEmbedder: pooling, Dense and Normalize as sentence-transformers
computes them, encode and its prompts against sentence-transformers' own
outputs (tests/fixtures/sentence_transformers), and the model's config,
.keras file and refusals."""

import keras
import numpy as np
import pytest

import bert_tf
from bert_tf.checkpoints import sentence_transformers
from bert_tf.layers.activations import HEAD_ACTIVATIONS
from tests.support.helpers import random_inputs, tiny_config
from tests.support.keras_harness import run_model_test
from tests.support.sentence_transformers_folders import (
    assert_as_sentence_transformers, expected, folder, opener)

INPUT_NAMES = ("input_ids", "input_mask", "segment_ids")
EVERY_POOLING = ["cls", "max", "mean", "mean_sqrt_len_tokens"]
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
  """cls, max, mean and mean_sqrt_len_tokens of [batch, seq, hidden] over
  the real tokens, concatenated."""
  rows = []
  for row, real in zip(tokens, mask.astype(bool)):
    kept = row[real]
    rows.append(np.concatenate([
        row[0], kept.max(0), kept.mean(0),
        kept.sum(0) / np.sqrt(len(kept))]))
  return np.array(rows)


def test_pooling_modes_dense_and_normalize_by_hand():
  """The modes concatenated in order, then each Dense with its activation,
  then the L2 norm; padding never pooled."""
  model = bert_tf.BertEmbedder(tiny_config(), EVERY_POOLING, TWO_DENSE,
                               normalize=True)
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
  plain = bert_tf.BertEmbedder(tiny_config(), EVERY_POOLING)
  plain.set_weights(model.encoder.get_weights())
  np.testing.assert_allclose(plain(inputs)["embedding"], pooled, rtol=0,
                             atol=1e-5)
  assert plain.dimension == 4 * 32


def test_a_tiny_embedder_passes_the_model_harness():
  """Config and .keras round trips, a checkpoint name for each Dense
  weight, mixed precision and int8."""
  config = tiny_config(num_hidden_layers=1)
  run_model_test(bert_tf.BertEmbedder(config, ["cls", "mean"], TWO_DENSE,
                                      normalize=True), encoder_inputs(config))


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


def test_what_encode_refuses_and_encoding_nothing(today_mean):
  with pytest.raises(ValueError, match=r"^BertEmbedder: prompt_name="
                                       r"'passage' is not one of its prompts "
                                       r"\(document, query\)$"):
    today_mean.encode(["a text"], prompt_name="passage")
  with pytest.raises(ValueError, match="^BertEmbedder.encode takes a list "
                                       "of texts, not one string$"):
    today_mean.encode("a text")
  with pytest.raises(ValueError, match="^BertEmbedder.encode: 3 is not a "
                                       "text$"):
    today_mean.encode(["a text", 3])
  nothing = today_mean.encode([])
  assert nothing.shape == (0, 32) and nothing.dtype == np.float32


def test_a_keras_file_keeps_the_settings_and_embeddings(opened, tmp_path):
  """A folder's embedder with a Dense (and prompts and a similarity given
  here), saved as .keras and loaded without its folder."""
  model = bert_tf.load_pretrained(
      folder("classic_cls_dense"), prompts={"query": "query: "},
      default_prompt_name="query", similarity="dot").model
  path = str(tmp_path / "embedder.keras")
  model.save(path)
  loaded = keras.saving.load_model(path)
  assert type(loaded) is bert_tf.BertEmbedder
  assert loaded.get_config() == model.get_config()
  settings = ("pooling", "dense", "normalize", "prompts",
              "default_prompt_name", "similarity")
  assert {name: getattr(loaded, name) for name in settings} == {
      "pooling": ["cls"], "normalize": True,
      "dense": [{"units": 16, "activation": "tanh", "use_bias": True}],
      "prompts": {"query": "query: "}, "default_prompt_name": "query",
      "similarity": "dot"}
  texts = expected("classic_cls_dense")["texts"]
  np.testing.assert_array_equal(loaded.encode(texts), model.encode(texts))
  assert_as_sentence_transformers(
      loaded.encode(texts, prompt=""),
      expected("classic_cls_dense")["embeddings"])
  assert loaded.preprocessor.max_seq_length == 16


def test_from_config_gives_the_same_model(today_mean):
  clone = bert_tf.BertEmbedder.from_config(today_mean.get_config())
  assert clone.get_config() == today_mean.get_config()
  assert clone.preprocessor.pair_packing == "transformers"
  clone.set_weights(today_mean.get_weights())
  inputs = today_mean.preprocessor(expected("today_mean")["texts"])
  np.testing.assert_array_equal(clone(inputs)["embedding"],
                                today_mean(inputs)["embedding"])


@pytest.mark.parametrize("arguments, message", [
    ({"pooling": "weightedmean"}, "pooling mode 'weightedmean'"),
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


def _by_hand(similarity, first, second):
  scores = np.zeros((len(first), len(second)))
  for i, a in enumerate(first):
    for j, b in enumerate(second):
      scores[i, j] = {
          "cosine": a @ b / np.linalg.norm(a) / np.linalg.norm(b),
          "dot": a @ b,
          "euclidean": -np.sqrt(np.sum((a - b) ** 2)),
          "manhattan": -np.sum(np.abs(a - b)),
      }[similarity]
  return scores


@pytest.mark.parametrize("similarity", ["cosine", "dot", "euclidean",
                                        "manhattan"])
def test_similarity_scores_as_sentence_transformers(similarity):
  """Cosine, dot, minus the euclidean and minus the manhattan distance,
  [len(first), len(second)]."""
  model = bert_tf.BertEmbedder(tiny_config(num_hidden_layers=1),
                               similarity=similarity)
  rng = np.random.default_rng(0)
  first, second = rng.normal(size=(3, 5)), rng.normal(size=(4, 5))
  np.testing.assert_allclose(model.similarity_scores(first, second),
                             _by_hand(similarity, first, second), rtol=1e-5,
                             atol=1e-5)


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
  assert sorted(sentence_transformers.TORCH_ACTIVATIONS) == sorted(
      HEAD_ACTIVATIONS)
