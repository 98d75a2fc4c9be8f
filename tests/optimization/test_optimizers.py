"""The original optimizer's trajectory, from ../shared/reference/original_tiny_train."""

import json
import os
import re

import keras
import ml_dtypes
import numpy as np
import pytest
import tensorflow as tf
from keras import ops

import bert_tf
from bert_tf.optimization import optimizers
from bert_tf.pretraining import features as pretraining_features
from tests.support.helpers import (ORIGINAL_TINY, ORIGINAL_TINY_TRAIN,
                                   assert_checkpoints_close, tiny_config)
from tests.support.keras_harness import EVERY_MODEL

TRAIN_DIR = ORIGINAL_TINY_TRAIN


def reference_batch():
  spec = pretraining_features.feature_spec(16, 4)
  dataset = tf.data.TFRecordDataset(os.path.join(TRAIN_DIR, "batch.tfrecord"))
  batch = next(iter(dataset.map(
      lambda record: tf.io.parse_single_example(record, spec)).batch(3)))
  return {name: tf.cast(value, tf.int32) if value.dtype == tf.int64 else value
          for name, value in batch.items()}


@pytest.fixture(scope="module")
def trajectory(tmp_path_factory):
  """Ten steps as the original run; checkpoints after steps 3 and 10."""
  config = bert_tf.BertConfig.from_json_file(
      os.path.join(TRAIN_DIR, "bert_config.json"))
  model = bert_tf.BertPretrainer(config)
  bert_tf.load_checkpoint(model, os.path.join(ORIGINAL_TINY, "bert_model.ckpt"))
  optimizer = optimizers.create_optimizer(1e-3, num_train_steps=10,
                                            num_warmup_steps=2)
  batch = reference_batch()
  variables = model.trainable_variables
  losses, checkpoints = [], {}
  for step in range(1, 11):
    with tf.GradientTape() as tape:
      loss = bert_tf.pretraining_loss(model(batch, training=True), batch)
    losses.append(float(loss))
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
    if step in (3, 10):
      checkpoints[step] = bert_tf.save_checkpoint(
          model, str(tmp_path_factory.mktemp("out") / f"model.ckpt-{step}"),
          global_step=step, optimizer=optimizer)
  return losses, checkpoints


@pytest.mark.shared
def test_losses_follow_the_original(trajectory):
  losses, _ = trajectory
  with open(os.path.join(TRAIN_DIR, "trajectory.json")) as reader:
    expected = json.load(reader)["losses_before_each_step"]
  np.testing.assert_allclose(losses, expected, atol=1e-4, rtol=0)


@pytest.mark.shared
@pytest.mark.parametrize("step", [3, 10])
def test_weights_and_adam_slots_equal_the_originals(trajectory, step):
  _, checkpoints = trajectory
  theirs = os.path.join(TRAIN_DIR, f"model.ckpt-{step}")
  assert len(tf.train.list_variables(theirs)) == 46 * 3 + 1
  assert_checkpoints_close(checkpoints[step], theirs, atol=1e-4)


def test_learning_rate_warms_up_then_decays_linearly():
  schedule = optimizers.WarmupPolynomialDecay(1e-3, num_train_steps=10,
                                                num_warmup_steps=2)
  # update k uses global_step k + 1, as the original's graph reads it
  rates = [float(schedule(step)) for step in range(11)]
  np.testing.assert_allclose(
      rates, [5e-4, 8e-4, 7e-4, 6e-4, 5e-4, 4e-4, 3e-4, 2e-4, 1e-4, 0.0, 0.0],
      atol=1e-9)


def original_rule_decays(name):
  """The original's rule, on original checkpoint names."""
  return not any(re.search(pattern, name)
                 for pattern in ("LayerNorm", "layer_norm", "bias"))


@pytest.mark.parametrize("name", EVERY_MODEL)
def test_weight_decay_skips_the_originals_layer_norms_and_biases(name):
  """The rule on Keras paths decays exactly the variables the original's
  rule decays by checkpoint name, for every model."""
  model = EVERY_MODEL[name](tiny_config())
  optimizer = optimizers.create_optimizer(1e-3, 10, 1)
  optimizer.build(model.trainable_variables)
  names = bert_tf.checkpoint_variables(model)
  trained = {id(variable) for variable in model.trainable_variables}
  decisions = {name: optimizer.decays(variable)
               for name, variable in names.items() if id(variable) in trained}
  assert decisions == {name: original_rule_decays(name) for name in decisions}
  assert any(decisions.values()) and not all(decisions.values())


def test_each_update_is_the_originals_formula():
  """Three updates in the fused kernel against the original's formula in
  float64: no bias correction, decay on decayed variables only."""
  rng = np.random.default_rng(0)
  initial = rng.normal(size=[2, 50, 40])
  decayed, excluded = (keras.Variable(value, dtype="float32", name=name)
                       for value, name in zip(initial, ("kernel", "bias")))
  optimizer = optimizers.AdamWeightDecay(learning_rate=0.01,
                                           global_clipnorm=None)
  weights = initial.copy()
  m, v = np.zeros_like(weights), np.zeros_like(weights)
  for _ in range(3):
    gradients = rng.normal(size=weights.shape)
    optimizer.apply_gradients(zip(tf.constant(gradients, tf.float32),
                                  [decayed, excluded]))
    m = 0.9 * m + 0.1 * gradients
    v = 0.999 * v + 0.001 * gradients ** 2
    update = m / (np.sqrt(v) + 1e-6)
    update[0] += 0.01 * weights[0]
    weights = weights - 0.01 * update
  np.testing.assert_allclose(decayed.numpy(), weights[0], rtol=0, atol=2e-6)
  np.testing.assert_allclose(excluded.numpy(), weights[1], rtol=0, atol=2e-6)
  for slot, expected in zip(optimizer.slots(decayed), (m[0], v[0])):
    np.testing.assert_allclose(slot.numpy(), expected, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", ["adamw", "lamb"])
def test_bfloat16_weights_take_the_float32_update_rounded(name):
  """Keras trains a model's bfloat16 weights (from_pretrained(dtype=
  "bfloat16")) with the optimizer as they are: three updates of bfloat16
  weights follow the same updates of float32 weights to bfloat16's
  precision, and adam_v grows. (In bfloat16, beta_2 = 0.999 is 1: adam_v
  stayed 0, AdamWeightDecay's steps were lr * m / epsilon, LAMB's 0 or
  NaN.)"""
  rng = np.random.default_rng(0)
  # Values bfloat16 holds: both start from the same numbers.
  initial, gradients = (
      rng.normal(size=shape).astype(ml_dtypes.bfloat16).astype(np.float32)
      for shape in ([2, 50], [3, 2, 50]))
  results = {}
  for dtype in ("float32", "bfloat16"):
    variables = [keras.Variable(value, dtype=dtype, name=variable_name)
                 for value, variable_name in zip(initial, ("kernel", "bias"))]
    optimizer = optimizers.OPTIMIZERS[name](learning_rate=0.01,
                                              global_clipnorm=None)
    for step_gradients in gradients:
      optimizer.apply_gradients(zip(tf.constant(step_gradients, dtype),
                                    variables))
    results[dtype] = [np.asarray(ops.cast(value, "float32")) for value in (
        *variables, *optimizer.slots(variables[0]))]
  for narrow, wide in zip(results["bfloat16"], results["float32"]):
    np.testing.assert_allclose(narrow, wide, rtol=2 ** -7,
                               atol=2 ** -7 * np.abs(wide).max())
  assert results["bfloat16"][-1].min() > 0


def test_clipping_sees_the_summed_embedding_gradient():
  """Repeated ids give IndexedSlices; their norm is that of the sum."""
  table = tf.Variable(tf.ones([4, 2]))
  optimizer = optimizers.AdamWeightDecay(learning_rate=0.0,
                                           global_clipnorm=1.0)
  with tf.GradientTape() as tape:
    loss = tf.reduce_sum(tf.gather(table, [1, 1, 1]))
  gradient = tape.gradient(loss, table)
  assert isinstance(gradient, tf.IndexedSlices)
  (clipped,) = optimizer._clip_gradients([gradient])
  # dense gradient: row 1 = [3, 3], norm 3*sqrt(2); clipped to norm 1
  np.testing.assert_allclose(clipped[1], [2 ** -0.5, 2 ** -0.5], rtol=1e-6)


@pytest.mark.model_garden
def test_lamb_follows_model_gardens():
  """Three updates of a decayed and an excluded variable, against MG's LAMB."""
  from official.modeling.optimization import lamb as model_garden_lamb
  rng = np.random.default_rng(0)
  kernel, bias = rng.normal(size=(4, 3)), rng.normal(size=(3,))
  grads = [(rng.normal(size=(4, 3)), rng.normal(size=(3,))) for _ in range(3)]

  ours = [keras.Variable(kernel, dtype="float32", name="kernel"),
          keras.Variable(bias, dtype="float32", name="bias")]
  optimizer = optimizers.Lamb(learning_rate=0.01, weight_decay_rate=0.01,
                                global_clipnorm=None)
  theirs = [tf.Variable(kernel, dtype=tf.float32, name="dense/kernel"),
            tf.Variable(bias, dtype=tf.float32, name="dense/bias")]
  reference = model_garden_lamb.LAMB(learning_rate=0.01,
                                     weight_decay_rate=0.01,
                                     exclude_from_weight_decay=["bias"])
  for kernel_grad, bias_grad in grads:
    step_grads = [tf.constant(kernel_grad, tf.float32),
                  tf.constant(bias_grad, tf.float32)]
    optimizer.apply_gradients(zip(step_grads, ours))
    reference.apply_gradients(zip(step_grads, theirs))
  for mine, model_garden in zip(ours, theirs):
    np.testing.assert_allclose(mine.numpy(), model_garden.numpy(), atol=1e-6)


def test_unknown_optimizer_is_refused():
  with pytest.raises(ValueError, match="--optimizer=sgd: expected one of"):
    optimizers.create_optimizer(1e-3, 10, 1, optimizer="sgd")
