"""Each task's Keras loss and metric (compile()'s defaults) give the
Trainer's numbers: both come from one function of each example, so they
cannot drift apart."""

import numpy as np
import pytest

from bert_tf.objectives.classification import (ClassificationObjective,
                                               MultiLabelObjective,
                                               RegressionObjective)
from bert_tf.objectives.multiple_choice import MultipleChoiceObjective
from bert_tf.objectives.pretraining import PretrainingObjective
from bert_tf.objectives.spans import SpanObjective
from bert_tf.objectives.tagging import TaggingObjective
from bert_tf.tasks.glue import examples as glue
from bert_tf.tasks.glue.task import GlueTask
from bert_tf.tasks.ner.task import NerTask
from bert_tf.tasks.squad.task import SquadTask
from bert_tf.tasks.swag.task import SwagTask
from tests.support.helpers import tiny_config

RNG = np.random.default_rng(0)
BATCH = 5
# The runners' padding: the last two examples are not real.
REAL = np.array([1, 1, 1, 0, 0], np.int32)


def _logits(*shape):
  return RNG.normal(size=shape).astype(np.float32) * 3


def _classes(classes, *shape):
  return RNG.integers(0, classes, shape).astype(np.int32)


def _per_example(objective, logits, labels):
  """(objective, outputs, features) of a batch with a label per example."""
  return (objective, {"logits": logits},
          {"label_ids": labels, "is_real_example": REAL})


def classification():
  return _per_example(ClassificationObjective(), _logits(BATCH, 3),
                      _classes(3, BATCH))


def regression():
  return _per_example(RegressionObjective(), _logits(BATCH, 1),
                      RNG.normal(size=BATCH).astype(np.float32))


def multi_label():
  return _per_example(MultiLabelObjective(), _logits(BATCH, 4),
                      _classes(2, BATCH, 4).astype(np.float32))


def cross_encoder():
  """One label scored from 0 to 1 (a CrossEncoder's BCEWithLogitsLoss)."""
  return _per_example(MultiLabelObjective(), _logits(BATCH, 1),
                      RNG.uniform(size=BATCH).astype(np.float32))


def multiple_choice():
  return _per_example(MultipleChoiceObjective(), _logits(BATCH, 4),
                      _classes(4, BATCH))


def spans():
  return (SpanObjective(),
          {"start_logits": _logits(BATCH, 7), "end_logits": _logits(BATCH, 7)},
          {"start_positions": _classes(7, BATCH),
           "end_positions": _classes(7, BATCH), "is_real_example": REAL})


def tagging():
  mask = (RNG.uniform(size=(BATCH, 6)) < 0.6).astype(np.int32)
  return (TaggingObjective(), {"logits": _logits(BATCH, 6, 9)},
          {"label_ids": _classes(9, BATCH, 6), "label_mask": mask})


TASKS = [classification, regression, multi_label, cross_encoder,
         multiple_choice, spans, tagging]


def keras_targets(features):
  """y as a Keras user passes it: the labels, or (start, end) positions."""
  if "start_positions" in features:
    return np.stack([features["start_positions"], features["end_positions"]],
                    axis=1)
  return features["label_ids"]


def weights_of(features):
  return np.asarray(features.get("label_mask", features.get(
      "is_real_example")), np.float32)


def trainer_loss(objective, outputs, features):
  (term,) = objective.loss_numerators(outputs, features)
  return float(objective.loss_numerators(outputs, features)[term]
               / objective.loss_denominators(features)[term])


@pytest.mark.parametrize("task", TASKS, ids=lambda task: task.__name__)
def test_keras_loss_weighted_as_the_trainer_is_the_trainers(task):
  """Keras reduces a loss over every example (sample weights scale each):
  scaled back to the weights' sum it is the Trainer's loss, padding and
  unlabelled positions left out. Tagging's loss is reduced over the
  weights' sum itself (label_mask, the words fit trains on)."""
  objective, outputs, features = task()
  loss, _ = objective.keras_defaults()
  weights = weights_of(features)
  keras_loss = float(loss(keras_targets(features),
                          objective.keras_scores(outputs),
                          sample_weight=weights))
  if objective.keras_reduction == "sum_over_batch_size":
    keras_loss *= weights.size / weights.sum()
  np.testing.assert_allclose(keras_loss,
                             trainer_loss(objective, outputs, features),
                             rtol=1e-6)


@pytest.mark.parametrize("task", [task for task in TASKS if task != tagging],
                         ids=lambda task: task.__name__)
def test_keras_loss_on_the_real_examples_is_the_trainers(task):
  """What fit computes on the real examples alone, unweighted, is the
  Trainer's loss on the batch padded with unreal ones."""
  objective, outputs, features = task()
  loss, _ = objective.keras_defaults()
  real = REAL.astype(bool)
  keras_loss = float(loss(keras_targets(features)[real],
                          objective.keras_scores(outputs)[real]))
  np.testing.assert_allclose(keras_loss,
                             trainer_loss(objective, outputs, features),
                             rtol=1e-6)


@pytest.mark.parametrize("task", TASKS, ids=lambda task: task.__name__)
def test_keras_metric_is_the_trainers(task):
  """compile()'s metric, weighted as the Trainer weighs it, is the
  Trainer's (a span's averages the start's and end's)."""
  objective, outputs, features = task()
  _, metrics = objective.keras_defaults()
  (metric,) = metrics
  metric.update_state(keras_targets(features),
                      objective.keras_scores(outputs),
                      sample_weight=weights_of(features))
  sums = objective.metric_sums(outputs, features)
  if not sums:  # a regressor's metric is its loss
    expected = trainer_loss(objective, outputs, features)
  else:
    expected = (sum(float(right) for right, _ in sums.values())
                / sum(float(count) for _, count in sums.values()))
  np.testing.assert_allclose(float(metric.result()), expected, rtol=1e-6)


@pytest.mark.parametrize("task", TASKS, ids=lambda task: task.__name__)
def test_a_batch_of_no_weight_adds_nothing(task):
  objective, outputs, features = task()
  features = {name: np.zeros_like(value)
              if name in ("is_real_example", "label_mask") else value
              for name, value in features.items()}
  loss, _ = objective.keras_defaults()
  (numerator,) = objective.loss_numerators(outputs, features).values()
  (denominator,) = objective.loss_denominators(features).values()
  assert float(numerator) == float(denominator) == 0.0
  assert float(loss(keras_targets(features), objective.keras_scores(outputs),
                    sample_weight=weights_of(features))) == 0.0


def test_the_pretraining_loss_is_its_terms_over_the_global_weights():
  """The masked-LM term over its weights plus 1e-5 (a batch without
  predictions gives 0), the next-sentence term over the examples."""
  ids = _classes(11, BATCH, 3)
  weights = np.array([[1, 1, 0]] * 3 + [[0, 0, 0]] * 2, np.float32)
  outputs = {"masked_lm_logits": _logits(BATCH, 3, 11),
             "next_sentence_log_probs": np.log(RNG.dirichlet(
                 [1, 1], BATCH)).astype(np.float32)}
  features = {"masked_lm_ids": ids, "masked_lm_weights": weights,
              "next_sentence_labels": _classes(2, BATCH)}
  log_probs = outputs["masked_lm_logits"] - np.log(np.exp(
      outputs["masked_lm_logits"]).sum(-1, keepdims=True))
  masked_lm = -np.take_along_axis(log_probs, ids[..., None], -1)[..., 0]
  next_sentence = -np.take_along_axis(
      outputs["next_sentence_log_probs"],
      features["next_sentence_labels"][:, None], -1)[:, 0]
  objective = PretrainingObjective()
  numerators = objective.loss_numerators(outputs, features)
  denominators = objective.loss_denominators(features)
  np.testing.assert_allclose(
      [numerators["masked_lm_loss"], denominators["masked_lm_loss"],
       numerators["next_sentence_loss"], denominators["next_sentence_loss"]],
      [(weights * masked_lm).sum(), 6, next_sentence.sum(), BATCH], rtol=1e-6)
  np.testing.assert_allclose(
      objective.loss(outputs, features),
      (weights * masked_lm).sum() / (6 + 1e-5) + next_sentence.mean(),
      rtol=1e-6)


@pytest.mark.parametrize("task", [
    GlueTask(glue.get_task("sst-2"), "data"),
    GlueTask(glue.get_task("sts-b"), "data"), SquadTask(None, None),
    NerTask("data"), NerTask("data", feature_based="last_hidden"),
    SwagTask("data")], ids=lambda task: type(task).__name__)
def test_a_runner_trains_its_model_with_the_models_objective(task):
  """What run_<task> trains with is what its model's compile() takes."""
  model = task.build_model(tiny_config())
  assert type(task.objective) is type(model.objective)

