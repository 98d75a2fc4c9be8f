"""MultipleNegativesRankingLoss and MatryoshkaLoss: sentence-transformers'
numbers on its own fixtures, and compile/fit/save of a BertEmbedder with
them."""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from bert_tf.objectives.embedding import (MatryoshkaLoss,
                                          MultipleNegativesRankingLoss)
from tests.support.helpers import PROJECT_DIR, token_columns

FOLDER = os.path.join(PROJECT_DIR, "tests", "fixtures",
                      "sentence_transformers", "today_mean")
EXPECTED = np.load(os.path.join(FOLDER, "expected.npz"))
ANCHORS = [str(text) for text in EXPECTED["anchors"]]
POSITIVES = [str(text) for text in EXPECTED["positives"]]
# sentence-transformers' MatryoshkaLoss on FOLDER's batch, and the
# embeddings it computed them on (tests/fixtures/embedding_losses).
LOSSES = np.load(os.path.join(PROJECT_DIR, "tests", "fixtures",
                              "embedding_losses", "expected.npz"))
MATRYOSHKA_EMBEDDINGS = LOSSES["matryoshka_embeddings"]


def _embedder():
  return bert_tf.load_pretrained(FOLDER).model


def _embeddings(model, *columns):
  """[batch, k, dim], eval mode (as the fixture's losses were computed)."""
  return model(tuple(tf.constant(column) for column in columns),
               training=False)["embedding"]


def _loss(model, loss=None):
  return float((loss or MultipleNegativesRankingLoss())(
      np.zeros(len(ANCHORS)), _embeddings(model, ANCHORS, POSITIVES)))


@pytest.fixture(scope="module")
def triplets():
  return _embeddings(_embedder(), EXPECTED["anchors"], EXPECTED["positives"],
                     EXPECTED["negatives"])


@pytest.mark.parametrize("key, columns, arguments", [
    ("mnrl_loss", 2, {}),
    ("mnrl_loss_dot", 2, {"scale": 1.0, "similarity": "dot"}),
    ("mnrl_loss_triplet", 3, {}),
])
def test_equals_sentence_transformers(triplets, key, columns, arguments):
  loss = MultipleNegativesRankingLoss(**arguments)(
      np.zeros(len(ANCHORS)), triplets[:, :columns])
  np.testing.assert_allclose(float(loss), EXPECTED[key], atol=1e-5)


def test_cosine_normalises_the_embeddings(triplets):
  np.testing.assert_allclose(
      float(MultipleNegativesRankingLoss()(np.zeros(len(ANCHORS)),
                                           3.0 * triplets[:, :2])),
      EXPECTED["mnrl_loss"], atol=1e-5)


@pytest.fixture(scope="module")
def trained():
  """A compiled embedder, its loss before and its weights, fit on lists
  of Python strings."""
  keras.utils.set_random_seed(0)
  model = _embedder()
  before = _loss(model)
  weights = [variable.numpy() for variable in model.trainable_variables]
  model.compile(keras.optimizers.Adam(1e-3),
                loss=MultipleNegativesRankingLoss())
  history = model.fit((ANCHORS, POSITIVES), batch_size=4, epochs=4,
                      verbose=0)
  return model, before, weights, history


def _changed(model, weights):
  return any(not np.array_equal(variable.numpy(), old)
             for variable, old in zip(model.trainable_variables, weights))


def test_fit_on_lists_of_strings_lowers_the_loss(trained):
  model, before, weights, history = trained
  assert len(history.history["loss"]) == 4
  assert _changed(model, weights)
  assert _loss(model) < before - 0.1


def test_fit_takes_a_dataset_of_one_tuple_of_columns(trained):
  model = trained[0]
  weights = [variable.numpy() for variable in model.trainable_variables]
  dataset = tf.data.Dataset.from_tensor_slices(
      ((ANCHORS, POSITIVES),)).batch(4)
  history = model.fit(dataset, epochs=1, verbose=0)
  assert np.isfinite(history.history["loss"]).all()
  assert _changed(model, weights)


def test_compiled_embedder_saves_and_loads_with_the_loss(tmp_path):
  model = _embedder()
  model.compile(keras.optimizers.Adam(1e-3),
                loss=MultipleNegativesRankingLoss(5.0, "dot"))
  path = str(tmp_path / "embedder.keras")
  model.save(path)
  loaded = keras.saving.load_model(path)
  assert isinstance(loaded.loss, MultipleNegativesRankingLoss)
  assert (loaded.loss.scale, loaded.loss.similarity) == (5.0, "dot")
  np.testing.assert_allclose(_loss(loaded, loaded.loss),
                             _loss(model, model.loss), atol=1e-6)


@pytest.mark.parametrize("arguments, message", [
    ({"scale": 0.0}, "scale=0.0; expected a number > 0"),
    ({"scale": -1}, "scale=-1; expected a number > 0"),
    ({"similarity": "euclidean"}, "similarity='euclidean'; expected cosine"),
])
def test_bad_arguments_are_refused(arguments, message):
  with pytest.raises(ValueError, match=message):
    MultipleNegativesRankingLoss(**arguments)


@pytest.mark.parametrize("shape", [(4, 1, 8), (4, 8)])
def test_embeddings_of_one_column_are_refused(shape):
  with pytest.raises(ValueError, match=r"expected \[batch, k >= 2, dim\]"):
    MultipleNegativesRankingLoss()(np.zeros(4), np.ones(shape, np.float32))


def _matryoshka(columns=2, **arguments):
  """MatryoshkaLoss over the default MultipleNegativesRankingLoss, on
  sentence-transformers' embeddings of the batch's first columns."""
  loss = MatryoshkaLoss(MultipleNegativesRankingLoss(), **arguments)
  return float(loss(np.zeros(len(ANCHORS)),
                    MATRYOSHKA_EMBEDDINGS[:, :columns]))


# Key in LOSSES: (MatryoshkaLoss arguments, MultipleNegativesRankingLoss
# arguments, columns), as make_embedding_losses.py computed them.
MATRYOSHKA_CASES = {
    "matryoshka_loss": ({"matryoshka_dims": [32, 16, 8]}, {}, 2),
    "matryoshka_loss_weighted": ({"matryoshka_dims": [8, 32, 16],
                                  "matryoshka_weights": [0.25, 1, 0.5]},
                                 {}, 2),
    # The embeddings are unit vectors; the dot product of their truncations
    # counts only once each is normalised again.
    "matryoshka_loss_dot": ({"matryoshka_dims": [32, 16, 4]},
                            {"scale": 1.0, "similarity": "dot"}, 2),
    "matryoshka_loss_triplet": ({"matryoshka_dims": [32, 16, 8]}, {}, 3),
    "matryoshka_loss_duplicates": ({"matryoshka_dims": [16, 16, 8],
                                    "matryoshka_weights": [1, 2, 0.5]},
                                   {}, 2),
    "matryoshka_loss_all_dims_per_step": ({"matryoshka_dims": [32, 16, 8],
                                           "n_dims_per_step": 3}, {}, 2),
}


@pytest.mark.parametrize("key", sorted(MATRYOSHKA_CASES))
def test_matryoshka_equals_sentence_transformers(key):
  arguments, base, columns = MATRYOSHKA_CASES[key]
  loss = MatryoshkaLoss(MultipleNegativesRankingLoss(**base), **arguments)
  np.testing.assert_allclose(
      float(loss(np.zeros(len(ANCHORS)), MATRYOSHKA_EMBEDDINGS[:, :columns])),
      LOSSES[key], atol=1e-5)


def test_matryoshka_takes_numpy_dims_and_weights():
  loss = MatryoshkaLoss(MultipleNegativesRankingLoss(), np.array([8, 32, 16]),
                        np.array([0.25, 1.0, 0.5]))
  assert loss.get_config()["matryoshka_dims"] == [32, 16, 8]
  np.testing.assert_allclose(
      float(loss(np.zeros(len(ANCHORS)), MATRYOSHKA_EMBEDDINGS[:, :2])),
      LOSSES["matryoshka_loss_weighted"], atol=1e-5)


def test_matryoshka_n_dims_per_step_sums_a_random_subset():
  dim_losses = LOSSES["matryoshka_dim_losses"]  # at 32, 16 and 8 alone
  pairs = {round(float(dim_losses[i] + dim_losses[j]), 4)
           for i, j in ((0, 1), (0, 2), (1, 2))}
  draws = []
  for _ in range(2):
    loss = MatryoshkaLoss(MultipleNegativesRankingLoss(), [32, 16, 8],
                          n_dims_per_step=2, seed=7)
    draws.append([round(float(loss(np.zeros(len(ANCHORS)),
                                   MATRYOSHKA_EMBEDDINGS[:, :2])), 4)
                  for _ in range(8)])
  assert set(draws[0]) <= pairs and len(set(draws[0])) > 1
  assert draws[0] == draws[1]  # the seed gives the same draws


def test_matryoshka_truncates_targets_of_the_embeddings_width():
  rng = np.random.default_rng(0)
  targets, embeddings = rng.normal(size=(2, 5, 6)).astype(np.float32)
  loss = MatryoshkaLoss(keras.losses.MeanSquaredError(), [6, 3],
                        matryoshka_weights=[1.0, 0.5])

  def mse(dim):
    truncated = embeddings[:, :dim]
    truncated /= np.linalg.norm(truncated, axis=-1, keepdims=True)
    return np.mean((targets[:, :dim] - truncated) ** 2)

  np.testing.assert_allclose(float(loss(targets, embeddings)),
                             mse(6) + 0.5 * mse(3), rtol=1e-6)


def test_matryoshka_on_the_embedders_own_embeddings(triplets):
  loss = MatryoshkaLoss(MultipleNegativesRankingLoss(), [32, 16, 8])
  np.testing.assert_allclose(float(loss(np.zeros(len(ANCHORS)),
                                        triplets[:, :2])),
                             LOSSES["matryoshka_loss"], atol=1e-5)


def test_matryoshka_fit_lowers_the_loss_and_saves(tmp_path):
  keras.utils.set_random_seed(0)
  model = _embedder()
  loss = MatryoshkaLoss(MultipleNegativesRankingLoss(), [32, 16, 8])
  before = _loss(model, loss)
  model.compile(keras.optimizers.Adam(1e-3), loss=loss)
  model.fit(token_columns(model, ANCHORS, POSITIVES), batch_size=4,
            epochs=4, verbose=0)
  after = _loss(model, model.loss)
  assert after < before - 0.1
  path = str(tmp_path / "embedder.keras")
  model.save(path)
  loaded = keras.saving.load_model(path)
  assert isinstance(loaded.loss, MatryoshkaLoss)
  assert isinstance(loaded.loss.loss, MultipleNegativesRankingLoss)
  assert loaded.loss.matryoshka_dims == (32, 16, 8)
  np.testing.assert_allclose(_loss(loaded, loaded.loss), after, atol=1e-6)


@pytest.mark.parametrize("arguments, error, message", [
    ({"matryoshka_dims": []}, ValueError,
     r"matryoshka_dims=\[\]; expected a non-empty list"),
    ({"matryoshka_dims": 32}, ValueError,
     "matryoshka_dims=32; expected a non-empty list"),
    ({"matryoshka_dims": [32, 0]}, ValueError,
     "matryoshka_dims has 0; expected integers >= 1"),
    ({"matryoshka_dims": [32, 16.0]}, ValueError,
     "matryoshka_dims has 16.0; expected integers"),
    ({"matryoshka_dims": [32, True]}, ValueError,
     "matryoshka_dims has True"),
    ({"matryoshka_dims": [32, 16], "matryoshka_weights": [1]}, ValueError,
     r"matryoshka_weights=\[1\]; expected 2 numbers, one per dim"),
    ({"matryoshka_dims": [32], "matryoshka_weights": [float("nan")]},
     ValueError, "matryoshka_weights has nan; expected finite numbers"),
    ({"matryoshka_dims": [32], "n_dims_per_step": 0}, ValueError,
     r"n_dims_per_step=0; expected -1 \(every dim\) or an integer >= 1"),
    ({"matryoshka_dims": [32], "seed": "0"}, ValueError,
     "seed='0'; expected an int or None"),
    ({"matryoshka_dims": [32], "loss": "mnrl"}, TypeError,
     "loss is str; expected a keras Loss"),
])
def test_matryoshka_bad_arguments_are_refused(arguments, error, message):
  arguments = {"loss": MultipleNegativesRankingLoss(), **arguments}
  with pytest.raises(error, match=message):
    MatryoshkaLoss(**arguments)


def test_matryoshka_dims_wider_than_the_embeddings_are_refused():
  with pytest.raises(ValueError, match="matryoshka_dims has 64, more than "
                     "the embeddings' 32 dimensions"):
    _matryoshka(matryoshka_dims=[64, 16])
