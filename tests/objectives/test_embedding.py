"""MultipleNegativesRankingLoss: sentence-transformers' numbers on its own
fixture, and compile/fit/save of a BertEmbedder with it."""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from bert_tf.objectives.embedding import MultipleNegativesRankingLoss
from tests.support.helpers import PROJECT_DIR

FOLDER = os.path.join(PROJECT_DIR, "tests", "fixtures",
                      "sentence_transformers", "today_mean")
EXPECTED = np.load(os.path.join(FOLDER, "expected.npz"))
ANCHORS = [str(text) for text in EXPECTED["anchors"]]
POSITIVES = [str(text) for text in EXPECTED["positives"]]


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
