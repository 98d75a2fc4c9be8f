import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from bert_tf.data.batching import feature_lengths
from bert_tf.models.predictor import Predictor
from tests.support.helpers import tiny_config


def varied_features(count, seq_length=64, seed=0):
  """Features of every length from 1 to seq_length, in random order."""
  rng = np.random.default_rng(seed)
  lengths = rng.integers(1, seq_length + 1, count)
  mask = (np.arange(seq_length) < lengths[:, None]).astype(np.int32)
  return {"input_ids": rng.integers(1, 99, mask.shape).astype(np.int32)
                       * mask, "input_mask": mask,
          "segment_ids": np.zeros_like(mask),
          "is_real_example": np.ones(count, np.int32)}


def encoder_predictor():
  strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
  with strategy.scope():
    model = bert_tf.BertEncoder(tiny_config())
  return Predictor(strategy, model), model


@pytest.mark.parametrize("by_length", [True, False])
def test_outputs_are_the_full_length_ones_in_input_order(by_length):
  """Batches cut to their own length give, in input order, the outputs of
  the whole features at every real position, nested structure kept (the
  list of all encoder layers); pooled outputs, as wide as one of the batch
  lengths (32), are not taken for positions."""
  predictor, model = encoder_predictor()
  features = varied_features(23)
  outputs = predictor.predict(features, batch_size=4, by_length=by_length)
  expected = model({name: tf.constant(value) for name, value in
                    features.items()}, training=False)
  np.testing.assert_allclose(outputs["pooled_output"],
                             expected["pooled_output"], atol=1e-5)
  assert len(outputs["all_encoder_layers"]) == 2
  lengths = feature_lengths(features)
  for ours, theirs in [(outputs["sequence_output"],
                        expected["sequence_output"].numpy()),
                       (outputs["all_encoder_layers"][0],
                        expected["all_encoder_layers"][0].numpy())]:
    assert ours.shape == theirs.shape == (23, 64, 32)
    for row, length in enumerate(lengths):
      np.testing.assert_allclose(ours[row, :length], theirs[row, :length],
                                 atol=1e-5)
  unreached = np.isneginf(outputs["sequence_output"]).all(axis=-1)
  if by_length:  # past a batch's own length, nothing was computed
    assert unreached.any() and not unreached[
        np.arange(64) < lengths[:, None]].any()
  else:
    assert not unreached.any()


def test_batches_of_many_lengths_trace_the_model_once(monkeypatch):
  """One trace for every batch size and length, the output axes' too:
  tracing is most of a short prediction job's time, and sizes unknown at
  trace time let TensorFlow fuse a bfloat16 LayerNorm."""
  predictor, _ = encoder_predictor()
  traced = []
  call = bert_tf.BertEncoder.call

  def traced_call(self, inputs, **kwargs):
    traced.append(inputs["input_ids"].shape)
    return call(self, inputs, **kwargs)

  monkeypatch.setattr(bert_tf.BertEncoder, "call", traced_call)
  predictor.predict(varied_features(23), batch_size=4)
  assert traced == [(None, None)]


def test_a_padded_dataset_gives_one_row_per_real_feature():
  strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
  with strategy.scope():
    model = bert_tf.BertClassifier(tiny_config(), num_labels=2)
  features = varied_features(5)
  outputs = Predictor(strategy, model).predict(features, batch_size=2)
  np.testing.assert_allclose(
      outputs["probabilities"],
      model({name: tf.constant(value) for name, value in features.items()},
            training=False)["probabilities"].numpy(), atol=1e-6)


def test_in_order_prediction_gives_each_row_at_its_batch_length():
  predictor, _ = encoder_predictor()
  features = varied_features(23, seq_length=32)
  full = predictor.predict(features, batch_size=4, by_length=False)
  rows = list(predictor.predict_in_order(features, batch_size=4,
                                         chunk_batches=3))
  assert [index for index, _ in rows] == list(range(23))
  assert len({outputs["sequence_output"].shape[0] for _, outputs in rows}) > 2
  for (index, outputs), length in zip(rows, feature_lengths(features)):
    np.testing.assert_allclose(outputs["sequence_output"][:length],
                               full["sequence_output"][index, :length],
                               atol=1e-5)


@pytest.mark.parametrize("by_length", [True, False])
def test_a_batch_holds_at_most_the_features_given(monkeypatch, by_length):
  """Five features with a batch_size of 1000 run as a batch of five: no
  padding rows beyond them (they would be allocated first)."""
  predictor, model = encoder_predictor()
  shapes = []
  distributed = predictor._distributed

  def recorded_distributed(batch):
    features = distributed(batch)
    shapes.append(features["input_ids"].shape[0])
    return features

  monkeypatch.setattr(predictor, "_distributed", recorded_distributed)
  features = varied_features(5, seq_length=16)
  outputs = predictor.predict(features, batch_size=1000,
                              by_length=by_length)
  rows = list(predictor.predict_in_order(features, batch_size=1000,
                                         chunk_batches=2))
  assert set(shapes) == {5}
  np.testing.assert_allclose(outputs["pooled_output"], model(
      {name: tf.constant(value) for name, value in features.items()},
      training=False)["pooled_output"], atol=1e-5)
  assert [index for index, _ in rows] == list(range(5))
