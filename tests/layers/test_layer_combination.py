"""LayerCombination: the paper's feature choices, concatenated or mixed."""

import numpy as np
import pytest

from bert_tf.layers import layer_combination
from bert_tf.layers.layer_combination import (CONCAT, EMBEDDINGS,
                                              LayerCombination, WEIGHTED_SUM)
from tests.support.keras_harness import run_layer_test


def encoder_outputs(num_layers=4):
  """Layer k is filled with k + 1, the embeddings with 0.5."""
  shape = (2, 3, 5)
  return {"embedding_output": np.full(shape, 0.5, np.float32),
          "all_encoder_layers": [np.full(shape, k + 1.0, np.float32)
                                 for k in range(num_layers)]}


def test_the_papers_choices_on_a_twelve_layer_model():
  choices = {choice: layer_combination.feature_layers(choice, 12)
             for choice in layer_combination.FEATURE_CHOICES}
  assert choices == {
      "embeddings": ((EMBEDDINGS,), CONCAT),
      "second_to_last_hidden": ((-2,), CONCAT),
      "last_hidden": ((-1,), CONCAT),
      "weighted_sum_last_four": ((-4, -3, -2, -1), WEIGHTED_SUM),
      "concat_last_four": ((-1, -2, -3, -4), CONCAT),
      "weighted_sum_all": (tuple(range(12)), WEIGHTED_SUM)}


@pytest.mark.parametrize("choice,num_layers,expected", [
    ("concat_last_four", 2, r"--feature_based=concat_last_four: layer -3 "
                            r"does not exist in a model of 2 layers"),
    ("last", 12, r"--feature_based=last: expected one of embeddings, "),
])
def test_a_choice_the_model_cannot_give_is_refused(choice, num_layers,
                                                   expected):
  with pytest.raises(ValueError, match=expected):
    layer_combination.feature_layers(choice, num_layers)


def test_layer_indexes_are_checked():
  layer_combination.check_layers([EMBEDDINGS, 0, 11, -12], 12, "--layers")
  for bad in (12, -13):
    with pytest.raises(ValueError, match=rf"--layers: layer {bad} does not "
                       r"exist in a model of 12 layers \(valid: -12 .. 11"):
      layer_combination.check_layers([bad], 12, "--layers")


def test_concatenation_in_the_order_given():
  combined = LayerCombination([-1, EMBEDDINGS, 0])(encoder_outputs())
  assert combined.shape == (2, 3, 15)
  np.testing.assert_array_equal(combined[0, 0], [4.0] * 5 + [0.5] * 5
                                + [1.0] * 5)
  single = LayerCombination([-2])(encoder_outputs())
  np.testing.assert_array_equal(single, encoder_outputs()[
      "all_encoder_layers"][-2])


def test_weighted_sum_is_a_learned_softmax_mix():
  layer = LayerCombination([-4, -3, -2, -1], WEIGHTED_SUM)
  outputs = encoder_outputs()
  # Equal weights, scale 1, at the start: the mean of layers 1..4.
  np.testing.assert_allclose(layer(outputs), np.full((2, 3, 5), 2.5),
                             rtol=1e-6)
  layer.layer_weights.assign([0.0, 0.0, 0.0, np.log(2.0)])
  layer.scale.assign(2.0)
  expected = 2.0 * (1 + 2 + 3 + 2 * 4) / 5
  np.testing.assert_allclose(layer(outputs), np.full((2, 3, 5), expected),
                             rtol=1e-6)
  assert [weight.name for weight in layer.trainable_weights] == [
      "layer_weights", "scale"]
  assert not LayerCombination([-1]).trainable_weights


def test_round_trips_through_its_config():
  run_layer_test(LayerCombination([-1, -2], WEIGHTED_SUM),
                 encoder_outputs())
