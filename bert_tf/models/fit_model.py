"""compile, fit, evaluate and predict as every bert_tf model has them
(FitModel, the base of BertKerasModel): compile() with the task's defaults
(fit_plan), fit, evaluate and predict that refuse, before any step, inputs
and targets the model cannot take, and what Keras traced forgotten where a
call fails or the model's weights change."""

import logging
import types

import keras

from bert_tf.models import fit_inputs, fit_plan, targets

logger = logging.getLogger(__name__)


class FitModel(keras.Model):
  """A keras.Model whose compile() defaults to the task's loss, metrics and
  the original's optimizer, and whose fit, evaluate and predict check what
  they are given first: a model says what it takes through keras_inputs
  and check_targets."""

  # compile()'s optimizer where none was given, until the first fit sizes
  # its schedule (fit_plan.PlannedOptimizer).
  _planned_optimizer = None

  # compile()'s arguments, to compile again after enable_lora; a mapping
  # Keras does not track (a dict's metrics would count twice).
  _compile_arguments = None

  def compile(self, optimizer=None, loss=None, metrics=None,
              learning_rate=fit_plan.LEARNING_RATE,
              warmup_proportion=fit_plan.WARMUP_PROPORTION, **kwargs):
    """keras.Model.compile, with the task's defaults for what is not given:
    its loss and, with it, its metrics (compile_defaults), and the original's
    AdamWeightDecay at learning_rate (a number > 0), warmed up over
    warmup_proportion (0 to 1) of the steps and decayed to 0 at the last
    step of the first fit that takes one, sized on the steps that fit runs
    from its data, batch size and epochs (fit_plan); a later fit warns that
    it trains at rate 0. `compile()` then fit on strings trains as
    run_classifier with its default flags, where the batch size divides
    the examples. A refused compile leaves the model as it was compiled."""
    arguments = types.MappingProxyType(dict(
        optimizer=optimizer, loss=loss, metrics=metrics,
        learning_rate=learning_rate, warmup_proportion=warmup_proportion,
        **kwargs))
    if loss is None:  # the task's loss, and its metrics unless given
      loss, default_metrics = self.compile_defaults()
      metrics = default_metrics if metrics is None else metrics
    plan = None
    if optimizer is None:
      plan = fit_plan.PlannedOptimizer(f"{type(self).__name__}.compile",
                                       learning_rate, warmup_proportion)
      optimizer = plan.optimizer
    super().compile(optimizer=optimizer, loss=loss, metrics=metrics,
                    **kwargs)
    self._planned_optimizer = plan
    self._compile_arguments = arguments

  def get_compile_config(self):
    config = super().get_compile_config()
    if config is not None and self._planned_optimizer is not None:
      # Saved before its first fit: the optimizer is still to be sized.
      config = {**config, "optimizer": None,
                **self._planned_optimizer.compile_arguments()}
    return config

  def compile_from_config(self, config):
    # Keras' own, which skips a model whose compile() is its own. An
    # optimizer never used (saved before the first fit) has no slots.
    self.compile(**keras.saving.deserialize_keras_object(config))
    if self.built and self._planned_optimizer is None:
      self.optimizer.build(self.trainable_variables)

  def compile_defaults(self):
    """compile()'s (loss, metrics) where none are given: the task's."""
    return None, None

  def fit(self, x=None, y=None, *args, **kwargs):
    fit_inputs.check_fit_numbers(type(self).__name__, args, kwargs)
    if isinstance(kwargs.get("validation_data"), tuple):
      kwargs["validation_data"] = self._keras_data(
          *kwargs["validation_data"], method="fit",
          where="validation_data's ")
    x, y = self._keras_data(x, y, method="fit")
    fit_inputs.sample_weight_as_arrays(kwargs, f"{type(self).__name__}.fit")
    plan = self._planned_optimizer
    if plan is not None:
      plan.size_for(type(self).__name__, x, args, kwargs)
    else:
      self._warn_if_the_rate_is_zero()
    try:
      return self._run_keras(super().fit, x, y, *args, **kwargs)
    finally:  # sized by the first fit that takes a step
      if plan is not None and _steps_taken(self.optimizer):
        self._planned_optimizer = None

  def evaluate(self, x=None, y=None, *args, **kwargs):
    x, y = self._keras_data(x, y, method="evaluate")
    fit_inputs.sample_weight_as_arrays(kwargs,
                                       f"{type(self).__name__}.evaluate")
    return self._run_keras(super().evaluate, x, y, *args, **kwargs)

  def predict(self, x, *args, **kwargs):
    return self._run_keras(super().predict, self.keras_inputs(x, "predict"),
                           *args, **kwargs)

  def keras_inputs(self, x, method):
    """x (or validation_data's x) as fit, evaluate and predict (`method`)
    pass it to Keras: refused when it holds no examples (None passes: a
    dataset may come otherwise)."""
    if x is not None and fit_inputs.has_no_examples(x):
      raise ValueError(f"{type(self).__name__}.{method}: x holds no "
                       "examples")
    return x

  def keras_targets(self, x, y, where):
    """y as fit and evaluate pass it to Keras (lists as arrays), checked
    against x (as keras_inputs gives it) by check_targets before any step;
    where: "BertClassifier.fit: y", for messages."""
    y = targets.as_arrays(y, where)
    self.check_targets(x, y, where)
    return y

  def check_targets(self, x, y, where):
    """Raises ValueError for targets y (arrays, tensors or None) that the
    model's loss would fail on at a step, or read wrongly. A model that
    trains on targets says what they are; here none."""

  def _keras_data(self, x, y=None, *rest, method, where=""):
    """(x, y, *rest) of fit or evaluate (`method`; `where`: "" or
    "validation_data's ") as Keras takes them: x by keras_inputs, y by
    keras_targets, a sample weight's list as an array."""
    x = self.keras_inputs(x, method)
    name = f"{type(self).__name__}.{method}: {where}"
    return (x, self.keras_targets(x, y, f"{name}y"),
            *(targets.as_arrays(weights, f"{name}sample_weight")
              for weights in rest))

  def _run_keras(self, run, *args, **kwargs):
    """Keras' fit, evaluate or predict (`run`), forgetting what Keras traced
    where it fails: a traced function whose first call failed fails every
    later one ("Creating variables on a non-first call")."""
    try:
      return run(*args, **kwargs)
    except Exception:
      self._forget_traces()
      raise

  def _forget_traces(self):
    self.train_function = self.test_function = self.predict_function = None

  def _retrace(self):
    """Forgets what Keras traced for fit, evaluate and predict (it holds
    the variables of its first call), compiling the model again where it
    was compiled."""
    self._forget_traces()
    if getattr(self, "compiled", False) and self._compile_arguments:
      arguments = dict(self._compile_arguments)
      optimizer = arguments["optimizer"]
      if isinstance(optimizer, keras.optimizers.Optimizer) and \
          optimizer.built:
        arguments["optimizer"] = type(optimizer).from_config(
            optimizer.get_config())
        logger.info("%s: a new %s for the trainable weights, its state was "
                    "of those before", type(self).__name__,
                    type(optimizer).__name__)
      self.compile(**arguments)

  def _warn_if_the_rate_is_zero(self):
    """Warns where fit would train at learning rate 0: a schedule (such as
    compile()'s default, sized by the first fit) that has ended."""
    optimizer = getattr(self, "optimizer", None)
    steps = 0 if optimizer is None else _steps_taken(optimizer)
    if steps and keras.ops.convert_to_numpy(optimizer.learning_rate) == 0:
      logger.warning("%s.fit: the learning rate is 0 at step %d: the "
                     "optimizer's schedule has ended (compile()'s default "
                     "ends with the first fit); compile() again to train on",
                     type(self).__name__, steps)


def _steps_taken(optimizer):
  """optimizer.iterations as a Python int (int() of it fails under a
  tf.distribute strategy)."""
  return int(keras.ops.convert_to_numpy(optimizer.iterations))
