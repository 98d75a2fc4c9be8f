import numpy as np
import tensorflow as tf

import bert_tf
from bert_tf.data.batching import (FEATURE_INDEX, length_bucketed_batches,
                                   prediction_batches)
from bert_tf.training.predictor import Predictor
from tests.helpers import random_inputs, tiny_config


def inputs(batch_size):
  return {name: value for name, value in random_inputs(
      tiny_config(), batch_size=batch_size).items()
          if name != "masked_lm_positions"}


def test_outputs_follow_feature_index_and_padding_is_dropped():
  """Whatever order the rows come in, outputs follow FEATURE_INDEX; nested
  outputs (the list of all encoder layers) keep their structure."""
  strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
  with strategy.scope():
    model = bert_tf.BertEncoder(tiny_config())
  features = {**inputs(4), FEATURE_INDEX: np.array([2, 0, 1, 0], np.int32),
              "is_real_example": np.array([1, 1, 1, 0], np.int32)}
  outputs = Predictor(strategy, model).predict(
      [{name: value[start:start + 2] for name, value in features.items()}
       for start in (0, 2)])
  expected = model(inputs(4), training=False)
  assert len(outputs["all_encoder_layers"]) == 2
  for ours, theirs in [(outputs["pooled_output"], expected["pooled_output"]),
                       (outputs["all_encoder_layers"][1],
                        expected["all_encoder_layers"][1])]:
    np.testing.assert_allclose(ours, theirs.numpy()[[1, 2, 0]], atol=1e-6)


def test_a_padded_dataset_gives_one_row_per_real_feature():
  strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
  with strategy.scope():
    model = bert_tf.BertClassifier(tiny_config(), num_labels=2)
  features = {**inputs(5), "is_real_example": np.ones(5, np.int32)}
  outputs = Predictor(strategy, model).predict(
      prediction_batches(features, batch_size=2))
  np.testing.assert_allclose(
      outputs["probabilities"],
      model(inputs(5), training=False)["probabilities"].numpy(), atol=1e-6)


def test_batches_cut_to_their_length_give_the_full_length_outputs():
  """length_bucketed_batches' rows come back in input order, with the
  outputs of the full length at every real position."""
  strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
  with strategy.scope():
    model = bert_tf.BertEncoder(tiny_config())
  rng = np.random.default_rng(0)
  lengths = rng.integers(1, 33, 23)
  mask = (np.arange(32) < lengths[:, None]).astype(np.int32)
  features = {"input_ids": rng.integers(0, 99, mask.shape).astype(np.int32)
                           * mask, "input_mask": mask,
              "segment_ids": np.zeros_like(mask),
              "is_real_example": np.ones(23, np.int32)}
  predictor = Predictor(strategy, model)
  full = predictor.predict(prediction_batches(features, 4))
  rows = list(predictor.predict_in_order(
      length_bucketed_batches(features, 4, bucket_width=8, chunk_batches=3)))
  assert [index for index, _ in rows] == list(range(23))
  assert len({outputs["sequence_output"].shape[0] for _, outputs in rows}) > 2
  for (index, outputs), length in zip(rows, lengths):
    np.testing.assert_allclose(outputs["sequence_output"][:length],
                               full["sequence_output"][index, :length],
                               atol=1e-5)
