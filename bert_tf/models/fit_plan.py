"""compile()'s default optimizer: the original's AdamWeightDecay with a
linear warmup and decay, sized by the first fit from its data, batch size
and epochs, as run_classifier sizes it from its flags."""

import inspect
import logging

import keras
import tensorflow as tf

from bert_tf.training.optimization import (AdamWeightDecay,
                                           WarmupPolynomialDecay)

logger = logging.getLogger(__name__)

# run_classifier's --learning_rate and --warmup_proportion defaults.
LEARNING_RATE = 5e-5
WARMUP_PROPORTION = 0.1
# Keras fit's batch size where none is given.
KERAS_BATCH_SIZE = 32


class PlannedOptimizer:
  """An AdamWeightDecay whose WarmupPolynomialDecay is sized by size_for(),
  once, before the first step (until then: one step, no warmup)."""

  def __init__(self, learning_rate, warmup_proportion):
    self.schedule = WarmupPolynomialDecay(learning_rate, 1, 0)
    self.optimizer = AdamWeightDecay(learning_rate=self.schedule)
    self.warmup_proportion = warmup_proportion

  def compile_arguments(self):
    """compile()'s arguments that make this plan again."""
    return {"learning_rate": self.schedule.init_lr,
            "warmup_proportion": self.warmup_proportion}

  def size_for(self, model_name, x, fit_args, fit_kwargs):
    """Sizes the schedule for keras.Model.fit(x, *fit_args, **fit_kwargs):
    num_train_steps = int(examples / batch size * epochs), as
    run_classifier counts them; warmup int(that * warmup_proportion)."""
    steps = train_steps(model_name, x, fit_args, fit_kwargs)
    self.schedule.num_train_steps = steps
    self.schedule.num_warmup_steps = int(steps * self.warmup_proportion)
    logger.info("%s: AdamWeightDecay at %g over %d steps, warmup %d",
                model_name, self.schedule.init_lr, steps,
                self.schedule.num_warmup_steps)


def train_steps(model_name, x, fit_args, fit_kwargs):
  """The training steps of fit(x, *fit_args, **fit_kwargs): steps_per_epoch
  or a dataset's batches times the epochs, else int(examples / batch size
  * epochs), examples less fit's validation_split.

  Raises:
    ValueError: a dataset of unknown size without steps_per_epoch, or too
      few examples for one batch.
  """
  arguments = inspect.signature(keras.Model.fit).bind(
      None, x, *fit_args, **fit_kwargs).arguments
  epochs = arguments.get("epochs", 1) - arguments.get("initial_epoch", 0)
  if arguments.get("steps_per_epoch"):
    return arguments["steps_per_epoch"] * epochs
  if isinstance(x, tf.data.Dataset):
    batches = int(x.cardinality())
    if batches < 0:
      raise ValueError(f"{model_name}.fit: a dataset of unknown size; pass "
                       "steps_per_epoch, or compile() an optimizer")
    return batches * epochs
  examples = _count_examples(x) * (1 - arguments.get("validation_split", 0))
  batch_size = arguments.get("batch_size") or KERAS_BATCH_SIZE
  steps = int(examples / batch_size * epochs)
  if steps < 1:
    raise ValueError(f"{model_name}.fit: {int(examples)} training examples "
                     f"make no full batch of batch_size={batch_size}")
  return steps


def _count_examples(x):
  """The examples in fit's x: a list, or an array or tensor whose first
  axis is the batch, or a tuple or dict of them."""
  if isinstance(x, dict):
    return _count_examples(next(iter(x.values())))
  if isinstance(x, tuple):
    return _count_examples(x[0])
  return len(x) if isinstance(x, list) else int(x.shape[0])
