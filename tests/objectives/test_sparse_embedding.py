"""SpladeLoss, SparseMultipleNegativesRankingLoss and FlopsLoss:
sentence-transformers' numbers on its own embeddings of a fixture batch
(tests/fixtures/embedding_losses) and on a BertSparseEncoder's of the same
folder, their Keras configs, and fit."""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from bert_tf.objectives.sparse_embedding import (
    FlopsLoss, SparseMultipleNegativesRankingLoss, SpladeLoss)
from tests.support.helpers import PROJECT_DIR, token_columns

FIXTURE_DIR = os.path.join(PROJECT_DIR, "tests", "fixtures",
                           "embedding_losses")
EXPECTED = np.load(os.path.join(FIXTURE_DIR, "expected.npz"))
# sentence-transformers' embeddings of the batch: [4, 3, 144] (queries,
# positives, negatives).
EMBEDDINGS = EXPECTED["splade_embeddings"]
NO_TARGETS = np.zeros(len(EMBEDDINGS))
COLUMNS = tuple([str(text) for text in EXPECTED[column]]
                for column in ("anchors", "positives", "negatives"))
WEIGHTS = {"document_regularizer_weight": 0.3,
           "query_regularizer_weight": 0.5}

# Key in EXPECTED: (SpladeLoss arguments, SparseMultipleNegativesRanking
# Loss arguments, columns), as make_embedding_losses.py computed them. EXPECTED
# holds each case's terms: base_loss, document_regularizer_loss,
# query_regularizer_loss (weighted; 0 where absent).
CASES = {
    "splade": (WEIGHTS, {}, 2),
    "splade_triplet": (WEIGHTS, {}, 3),
    "splade_no_query": ({"document_regularizer_weight": 0.3}, {}, 3),
    "splade_documents_only": ({"document_regularizer_weight": 0.3,
                               "use_document_regularizer_only": True}, {},
                              3),
    "splade_thresholds": ({**WEIGHTS, "document_regularizer_threshold": 108,
                           "query_regularizer_threshold": 113}, {}, 3),
    "splade_cosine": (WEIGHTS, {"scale": 20.0, "similarity": "cosine"}, 2),
    "splade_defaults": ({"document_regularizer_weight": 3e-5,
                         "query_regularizer_weight": 5e-5}, {}, 2),
}


def splade(key):
  """CASES[key]'s loss and the embeddings it takes."""
  arguments, ranking, columns = CASES[key]
  return (SpladeLoss(SparseMultipleNegativesRankingLoss(**ranking),
                     **arguments), EMBEDDINGS[:, :columns])


@pytest.mark.parametrize("key", sorted(CASES))
def test_equals_sentence_transformers(key):
  loss, embeddings = splade(key)
  np.testing.assert_allclose(float(loss(NO_TARGETS, embeddings)),
                             EXPECTED[key].sum(), atol=1e-5)


@pytest.mark.parametrize("key", ["splade_triplet", "splade_thresholds",
                                 "splade_documents_only"])
def test_each_term_equals_sentence_transformers(key):
  loss, embeddings = splade(key)
  base, documents, queries = EXPECTED[key]
  first = 0 if loss.use_document_regularizer_only else 1
  np.testing.assert_allclose(float(loss.loss(NO_TARGETS, embeddings)), base,
                             atol=1e-5)
  np.testing.assert_allclose(
      loss.document_regularizer_weight * float(loss.document_regularizer(
          NO_TARGETS, embeddings[:, first:])), documents, atol=1e-5)
  if loss.query_regularizer_weight is not None:
    np.testing.assert_allclose(
        loss.query_regularizer_weight * float(loss.query_regularizer(
            NO_TARGETS, embeddings[:, 0])), queries, atol=1e-5)


def test_flops_threshold_drops_rows_with_few_active_dims():
  rows = np.array([[1.0, 0.0, 0.0], [3.0, 4.0, 0.0]], np.float32)
  assert float(FlopsLoss()(NO_TARGETS, rows)) == pytest.approx(4.0 + 4.0)
  assert float(FlopsLoss(threshold=1)(NO_TARGETS, rows)) == pytest.approx(
      1.5 ** 2 + 2.0 ** 2)
  assert float(FlopsLoss(threshold=2)(NO_TARGETS, rows)) == 0.0


def test_zero_embeddings_give_the_ranking_loss_of_ties():
  loss = SpladeLoss(SparseMultipleNegativesRankingLoss(), 0.3, 0.5)
  np.testing.assert_allclose(
      float(loss(NO_TARGETS, np.zeros((4, 3, 144), np.float32))),
      np.log(8.0), rtol=1e-6)


def test_the_config_gives_the_same_loss():
  loss = SpladeLoss(SparseMultipleNegativesRankingLoss(scale=2.0), 0.3,
                    0.5, document_regularizer=FlopsLoss(threshold=108),
                    query_regularizer_threshold=113)
  copy = keras.saving.deserialize_keras_object(
      keras.saving.serialize_keras_object(loss))
  assert isinstance(copy.document_regularizer, FlopsLoss)
  assert copy.loss.scale == 2.0
  assert copy.query_regularizer.threshold == 113
  np.testing.assert_allclose(float(copy(NO_TARGETS, EMBEDDINGS)),
                             float(loss(NO_TARGETS, EMBEDDINGS)), rtol=1e-6)


@pytest.mark.parametrize("arguments, error, message", [
    ({"document_regularizer_weight": -1.0}, ValueError,
     "document_regularizer_weight=-1.0; expected a number >= 0"),
    ({"document_regularizer_weight": None}, ValueError,
     "document_regularizer_weight=None; expected a number >= 0"),
    ({"query_regularizer_weight": float("inf")}, ValueError,
     "query_regularizer_weight=inf; expected a number >= 0"),
    ({"document_regularizer_threshold": -1}, ValueError,
     "document_regularizer_threshold=-1; expected None or a number >= 0"),
    ({"query_regularizer_threshold": "5"}, ValueError,
     "query_regularizer_threshold='5'; expected None or a number >= 0"),
    ({"document_regularizer": FlopsLoss(),
      "document_regularizer_threshold": 5}, ValueError,
     "document_regularizer_threshold applies to the default FlopsLoss"),
    ({"query_regularizer": "flops"}, TypeError,
     "query_regularizer is str; expected a keras Loss"),
    ({"loss": None}, TypeError, "loss is NoneType; expected a keras Loss"),
    ({"use_document_regularizer_only": True,
      "query_regularizer_weight": 0.5}, ValueError,
     r"query_regularizer_weight=0.5 with use_document_regularizer_only="
     r"True; expected None"),
])
def test_bad_arguments_are_refused(arguments, error, message):
  arguments = {"loss": SparseMultipleNegativesRankingLoss(),
               "document_regularizer_weight": 0.3, **arguments}
  with pytest.raises(error, match=message):
    SpladeLoss(**arguments)


def test_embeddings_of_one_column_are_refused():
  loss = SpladeLoss(SparseMultipleNegativesRankingLoss(), 0.3, 0.5)
  with pytest.raises(ValueError, match=r"expected \[batch, k >= 2, dim\]"):
    loss(NO_TARGETS, EMBEDDINGS[:, :1])


def _own_loss(model, loss):
  """loss on the model's embeddings of the batch's three columns, in eval
  mode (as sentence-transformers computed EXPECTED)."""
  embeddings = model(tuple(tf.constant(column) for column in COLUMNS),
                     training=False)["embedding"]
  return float(loss(NO_TARGETS, embeddings))


@pytest.fixture(scope="module")
def trained():
  """The fixture's BertSparseEncoder compiled with SpladeLoss, its loss
  before, fit 4 steps on the (anchor, positive) pairs' tokens."""
  keras.utils.set_random_seed(0)
  model = bert_tf.load_pretrained(os.path.join(FIXTURE_DIR, "splade")).model
  loss = splade("splade_triplet")[0]
  before = _own_loss(model, loss)
  model.compile(keras.optimizers.Adam(1e-3), loss=loss)
  model.fit(token_columns(model, *COLUMNS[:2]), batch_size=4, epochs=4,
            verbose=0)
  return model, before


def test_on_the_sparse_encoders_own_embeddings(trained):
  np.testing.assert_allclose(trained[1], EXPECTED["splade_triplet"].sum(),
                             atol=1e-5)


def test_compile_defaults_to_sentence_transformers_default_loss(trained):
  loss, metrics = trained[0].compile_defaults()
  assert isinstance(loss, SpladeLoss) and metrics is None
  assert isinstance(loss.loss, SparseMultipleNegativesRankingLoss)
  assert (loss.loss.scale, loss.loss.similarity) == (1.0, "dot")
  assert (loss.document_regularizer_weight, loss.query_regularizer_weight,
          loss.use_document_regularizer_only) == (3e-5, 5e-5, False)
  assert isinstance(loss.document_regularizer, FlopsLoss)
  assert loss.document_regularizer.threshold is None
  np.testing.assert_allclose(float(loss(NO_TARGETS, EMBEDDINGS[:, :2])),
                             EXPECTED["splade_defaults"].sum(), atol=1e-5)


def test_fit_lowers_the_loss_and_saves(trained, tmp_path):
  model, before = trained
  after = _own_loss(model, model.loss)
  assert after < before - 1.0
  path = str(tmp_path / "sparse_encoder.keras")
  model.save(path)
  loaded = keras.saving.load_model(path)
  assert isinstance(loaded.loss, SpladeLoss)
  assert isinstance(loaded.loss.loss, SparseMultipleNegativesRankingLoss)
  assert (loaded.loss.document_regularizer_weight,
          loaded.loss.query_regularizer_weight) == (0.3, 0.5)
  np.testing.assert_allclose(_own_loss(loaded, loaded.loss), after,
                             atol=1e-5)
