"""BertTagger and BertFeatureTagger: run_ner's models and their names."""

import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from bert_tf.checkpoints.original import tf_checkpoints
from bert_tf.optimization.optimizers import create_optimizer
from tests.support.helpers import random_inputs, tiny_config
from tests.support.keras_harness import run_model_test

INPUT_NAMES = ("input_ids", "input_mask", "segment_ids")


def inputs():
  return {name: value for name, value in random_inputs(tiny_config()).items()
          if name in INPUT_NAMES}


def test_the_fine_tuned_tagger_saves_and_loads_its_head(tmp_path):
  model = bert_tf.models.BertTagger(tiny_config(), num_labels=9)
  outputs = model(inputs())
  assert outputs["logits"].shape == (3, 16, 9)
  np.testing.assert_allclose(outputs["probabilities"],
                             tf.nn.softmax(outputs["logits"]), atol=1e-6)
  path = bert_tf.save_checkpoint(model, str(tmp_path / "model.ckpt-1"))
  shapes = dict(tf.train.list_variables(path))
  assert shapes["cls/ner/output_weights"] == [9, 32]
  assert shapes["cls/ner/output_bias"] == [9]
  restored = bert_tf.models.BertTagger(tiny_config(), num_labels=9)
  bert_tf.load_checkpoint(restored, path)
  np.testing.assert_allclose(restored(inputs())["logits"], outputs["logits"],
                             atol=1e-6)


def feature_tagger(combination="weighted_sum"):
  return bert_tf.models.BertFeatureTagger(tiny_config(), 9, (-2, -1),
                                          combination, lstm_units=8)


def test_the_feature_tagger_trains_only_its_head(tmp_path):
  model = feature_tagger()
  assert model(inputs())["logits"].shape == (3, 16, 9)
  names = bert_tf.checkpoints.model_weights.checkpoint_variables(model)
  trainable = {id(variable) for variable in model.trainable_variables}
  assert {name for name, variable in names.items()
          if id(variable) in trainable} == {
              name for name in names if name.startswith("ner/")}
  assert len([name for name in names if name.startswith("ner/")]) == \
      2 + 2 + 2 * 2 * 3
  optimizer = create_optimizer(1e-3, 10, 1)
  optimizer.build(model.trainable_variables)
  path = bert_tf.save_checkpoint(model, str(tmp_path / "model.ckpt-1"),
                                 optimizer=optimizer)
  shapes = dict(tf.train.list_variables(path))
  assert "bert/encoder/layer_0/output/dense/kernel" in shapes
  assert not any(name.startswith("bert/") and name.endswith("adam_m")
                 for name in shapes)
  assert shapes["ner/layer_weights/adam_v"] == [2]
  assert shapes["ner/bilstm_0/fw/kernel"] == [32, 32]
  restored = feature_tagger()
  bert_tf.load_checkpoint(restored, path)
  restored_optimizer = create_optimizer(1e-3, 10, 1)
  assert tf_checkpoints.load_optimizer_slots(
      restored, restored_optimizer, tf_checkpoints.open_reader(path),
      path) == 0
  np.testing.assert_allclose(restored(inputs())["logits"],
                             model(inputs())["logits"], atol=1e-6)


def test_padding_does_not_reach_the_bilstm():
  """The BiLSTM reads real tokens only: the outputs at them do not change
  with how much padding follows."""
  model = feature_tagger("concat")
  short = {name: value[:1, :10] for name, value in inputs().items()}
  padded = {name: np.pad(value, [(0, 0), (0, 6)])
            for name, value in short.items()}
  np.testing.assert_allclose(model(padded)["logits"][:, :10],
                             model(short)["logits"], atol=1e-5)


@pytest.mark.parametrize("combination", ["weighted_sum", "concat"])
def test_the_feature_tagger_is_a_keras_model(combination):
  run_model_test(feature_tagger(combination), inputs())


def test_the_fine_tuned_tagger_is_a_keras_model():
  run_model_test(bert_tf.BertTagger(tiny_config(), num_labels=9), inputs())


@pytest.mark.parametrize("make, message", [
    (lambda: bert_tf.models.BertTagger(tiny_config(), 0),
     "BertTagger: num_labels=0"),
    (lambda: bert_tf.models.BertFeatureTagger(tiny_config(), 0, (-1,),
                                              "concat"),
     "BertFeatureTagger: num_labels=0"),
    (lambda: bert_tf.models.BertFeatureTagger(tiny_config(), 9, (-1,),
                                              "concat", lstm_units=0),
     "BertFeatureTagger: lstm_units=0"),
    (lambda: bert_tf.models.BertFeatureTagger(tiny_config(), 9, (2,),
                                              "concat"),
     "BertFeatureTagger selected_layers: layer 2 does not exist"),
    (lambda: bert_tf.models.BertFeatureTagger(tiny_config(), 9, (),
                                              "concat"),
     "BertFeatureTagger: selected_layers is empty"),
])
def test_invalid_arguments_are_refused_when_the_model_is_built(make,
                                                                message):
  with pytest.raises(ValueError, match=message):
    make()
