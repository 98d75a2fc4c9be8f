"""A task's loss, stated once as a loss of each example, and the two
forms made of it: the Trainer's numerators and denominators, and the keras
Loss that compile() takes."""

import dataclasses

import keras
from keras import ops


@dataclasses.dataclass(frozen=True)
class Term:
  """One loss term: the weighted mean of a loss of each example (or
  prediction) over the batch.

  Attributes:
    name: the term's name in the trainer's reports ("classification_loss").
    example_losses: (targets, scores) -> the loss of each example: a
      function Keras can save (registered), which the keras Loss calls.
    targets: the feature of the targets, or a tuple of features stacked on
      axis 1 (the start and end positions of a span).
    scores: the output the loss scores, or a tuple stacked on axis 1: what
      the model's target_output gives Keras.
    weights: the feature of each example's weight, which the denominator
      sums; None: every example weighs 1 (the denominator counts them).
    scale: a feature that, where the features hold it, scales each loss
      and not the denominator (Keras' sample weights of a term whose
      denominator counts the examples); None: none.
    epsilon: added to the global denominator, as the original adds it.
  """
  name: str
  example_losses: object
  targets: object
  scores: object
  weights: object = None
  scale: object = None
  epsilon: float = 0.0

  def target_values(self, features):
    return _stacked(features, self.targets)

  def score_values(self, outputs):
    return _stacked(outputs, self.scores)

  def weight_values(self, features):
    """float32 weights of the examples, 1 where the term names none."""
    if self.weights is None:
      return ops.ones(_leading_shape(self.target_values(features)), "float32")
    return ops.cast(features[self.weights], "float32")

  def numerator(self, outputs, features):
    """The weighted sum of the examples' losses: float32 scalar."""
    losses = self.example_losses(self.target_values(features),
                                 self.score_values(outputs))
    weights = self.weight_values(features)
    if self.scale is not None and self.scale in features:
      weights *= ops.reshape(ops.cast(features[self.scale], "float32"),
                             ops.shape(weights))
    return ops.sum(ops.reshape(weights, ops.shape(losses)) * losses)

  def denominator(self, features):
    """The sum of the examples' weights: float32 scalar."""
    return ops.sum(self.weight_values(features))

  def loss(self, outputs, features):
    """The term on one device: numerator / (denominator + epsilon)."""
    return self.numerator(outputs, features) / (self.denominator(features)
                                                + self.epsilon)

  def keras_loss(self, reduction="sum_over_batch_size"):
    """compile()'s loss: example_losses, reduced as Keras reduces a loss
    (by default the mean over the examples, weighted by fit's
    sample_weight)."""
    return ExampleLoss(self.example_losses, reduction=reduction)


@keras.saving.register_keras_serializable(package="bert_tf")
class ExampleLoss(keras.losses.Loss):
  """A keras Loss of a function of (targets, scores) that gives each
  example's loss: a function Keras can save (registered)."""

  def __init__(self, function, name=None, **kwargs):
    super().__init__(name=name or function.__name__, **kwargs)
    self.function = function

  def call(self, y_true, y_pred):
    return self.function(y_true, y_pred)

  def get_config(self):
    return {**super().get_config(),
            "function": keras.saving.serialize_keras_object(self.function)}

  @classmethod
  def from_config(cls, config):
    return cls(**{**config, "function": keras.saving.deserialize_keras_object(
        config["function"])})


def _stacked(values, names):
  if isinstance(names, tuple):
    return ops.stack([values[name] for name in names], axis=1)
  return values[names]


def _leading_shape(targets):
  """The examples' shape of a term's targets: all but a trailing 1."""
  shape = ops.shape(targets)
  if len(shape) > 1 and isinstance(shape[-1], int) and shape[-1] == 1:
    return shape[:-1]
  return shape


class Objective:
  """A task's loss terms and metrics, as the Trainer takes them
  (loss_numerators, loss_denominators, denominator_epsilons, metric_sums)
  and as Keras' compile() takes them (keras_defaults).

  A task sets `terms` and, for metrics beyond the loss terms, `metrics`
  and `keras_metric`.
  """

  terms = ()
  # {name: Term}: Terms whose example_losses is the metric of each
  # example; the trainer reports its weighted sum and weight.
  metrics = {}
  # (Keras' metric name, per-example metric) on the first term's targets
  # and scores, or None.
  keras_metric = None
  # How compile()'s loss reduces the examples' losses (Keras' reduction).
  keras_reduction = "sum_over_batch_size"

  @property
  def denominator_epsilons(self):
    """{term: epsilon} added to each term's global denominator."""
    return {term.name: term.epsilon for term in self.terms}

  def loss_denominators(self, features):
    """{term: float32 scalar}, from the features only."""
    return {term.name: term.denominator(features) for term in self.terms}

  def loss_numerators(self, outputs, features):
    """{term: float32 scalar}: the weighted sums of the examples' losses."""
    return {term.name: term.numerator(outputs, features)
            for term in self.terms}

  def metric_sums(self, outputs, features):
    """{name: (sum, count)} for the metrics beyond the loss terms."""
    return {name: (metric.numerator(outputs, features),
                   metric.denominator(features))
            for name, metric in self.metrics.items()}

  def loss(self, outputs, features):
    """The batch's loss on one device: each term's numerator over its
    denominator (plus epsilon), summed."""
    return sum(term.loss(outputs, features) for term in self.terms)

  def keras_scores(self, outputs):
    """What Keras' loss and metrics score: the first term's scores."""
    return self.terms[0].score_values(outputs)

  def keras_defaults(self):
    """compile()'s (loss, metrics): the first term's loss, and
    keras_metric."""
    metrics = None
    if self.keras_metric is not None:
      name, function = self.keras_metric
      metrics = [keras.metrics.MeanMetricWrapper(function, name=name)]
    return self.terms[0].keras_loss(self.keras_reduction), metrics
