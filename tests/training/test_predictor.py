import numpy as np
import tensorflow as tf

import bert_tf
from bert_tf.data.batching import FEATURE_INDEX, feature_dataset
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
      tf.data.Dataset.from_tensor_slices(features).batch(2), num_batches=2)
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
      feature_dataset(features, batch_size=2, is_training=False),
      num_batches=3)
  np.testing.assert_allclose(
      outputs["probabilities"],
      model(inputs(5), training=False)["probabilities"].numpy(), atol=1e-6)
