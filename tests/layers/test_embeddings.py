import numpy as np
import pytest

from bert_tf.layers.embeddings import BertEmbeddings
from tests.support.keras_harness import run_layer_test


def make_layer(**overrides):
  args = dict(vocab_size=20, hidden_size=8, type_vocab_size=2,
              max_position_embeddings=6, dropout_rate=0.1)
  args.update(overrides)
  return BertEmbeddings(**args)


def test_sum_of_three_tables_then_layer_norm():
  layer = make_layer()
  ids = np.array([[3, 5, 7]], np.int32)
  segments = np.array([[0, 1, 1]], np.int32)
  output = np.asarray(layer(ids, segments))
  word = layer.word_embeddings.numpy()
  token_type = layer.token_type_embeddings.numpy()
  position = layer.position_embeddings.numpy()
  summed = word[ids[0]] + token_type[segments[0]] + position[:3]
  normalised = (summed - summed.mean(-1, keepdims=True)) / np.sqrt(
      summed.var(-1, keepdims=True) + 1e-12)
  np.testing.assert_allclose(output[0], normalised, atol=1e-5)


def test_tables_have_original_shapes_and_truncated_normal_init():
  layer = make_layer(vocab_size=2000, hidden_size=64, initializer_range=0.02)
  layer.build()
  assert tuple(layer.word_embeddings.shape) == (2000, 64)
  assert tuple(layer.token_type_embeddings.shape) == (2, 64)
  assert tuple(layer.position_embeddings.shape) == (6, 64)
  values = layer.word_embeddings.numpy()
  assert np.abs(values).max() <= 0.04 + 1e-6  # cut at two stddevs
  assert 0.015 < values.std() < 0.02


def test_longer_than_position_table_is_an_error():
  with pytest.raises(ValueError, match="Sequence length 7 exceeds "
                     "max_position_embeddings \\(6\\)"):
    make_layer()(np.zeros((1, 7), np.int32), np.zeros((1, 7), np.int32))


def test_dropout_only_when_training():
  layer = make_layer(dropout_rate=0.5)
  ids = np.ones((2, 5), np.int32)
  inference = np.asarray(layer(ids, ids * 0))
  np.testing.assert_array_equal(inference, np.asarray(layer(ids, ids * 0)))
  trained = np.asarray(layer(ids, ids * 0, training=True))
  assert (trained == 0).mean() > 0.2


def test_config_round_trip():
  ids = np.array([[1, 2, 3, 4]], np.int32)
  run_layer_test(make_layer(), ids, ids * 0)
