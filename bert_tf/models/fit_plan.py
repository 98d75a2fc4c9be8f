"""compile()'s default optimizer: the original's AdamWeightDecay with a
linear warmup and decay, sized by the first fit on the steps that fit runs:
its data, batch size and epochs."""

import inspect
import logging
import math
import numbers

import keras
import tensorflow as tf

from bert_tf.models.targets import examples_in
from bert_tf.optimization.optimizers import (AdamWeightDecay,
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

  def __init__(self, where, learning_rate, warmup_proportion):
    """where: "BertClassifier.compile", say, for errors.

    Raises:
      ValueError: a learning_rate not a number > 0, or a warmup_proportion
        not a share from 0 to 1 (run_classifier's --warmup_proportion).
    """
    if isinstance(learning_rate, bool) or \
        not isinstance(learning_rate, numbers.Real) or \
        not 0 < learning_rate < math.inf:
      raise ValueError(f"{where}: learning_rate={learning_rate!r} must be a "
                       "number > 0")
    if isinstance(warmup_proportion, bool) or \
        not isinstance(warmup_proportion, numbers.Real) or \
        not 0 <= warmup_proportion <= 1:
      raise ValueError(f"{where}: warmup_proportion={warmup_proportion!r} "
                       "must be a share from 0 to 1")
    self.schedule = WarmupPolynomialDecay(float(learning_rate), 1, 0)
    self.optimizer = AdamWeightDecay(learning_rate=self.schedule)
    self.warmup_proportion = float(warmup_proportion)

  def compile_arguments(self):
    """compile()'s arguments that make this plan again."""
    return {"learning_rate": self.schedule.init_lr,
            "warmup_proportion": self.warmup_proportion}

  def size_for(self, model_name, x, fit_args, fit_kwargs):
    """Sizes the schedule for keras.Model.fit(x, *fit_args, **fit_kwargs):
    num_train_steps the steps it runs (train_steps), warmup int(that *
    warmup_proportion), so that the learning rate reaches 0 at the last
    step, as the original's does at num_train_steps."""
    steps = train_steps(model_name, x, fit_args, fit_kwargs)
    self.schedule.num_train_steps = steps
    self.schedule.num_warmup_steps = int(steps * self.warmup_proportion)
    logger.info("%s: AdamWeightDecay at %g over %d steps, warmup %d",
                model_name, self.schedule.init_lr, steps,
                self.schedule.num_warmup_steps)


def train_steps(model_name, x, fit_args, fit_kwargs):
  """The training steps fit(x, *fit_args, **fit_kwargs) runs:
  steps_per_epoch or a dataset's (or PyDataset's) batches times the epochs,
  else ceil(examples / batch size) * epochs (Keras' last batch of an epoch
  may be short), the examples those fit's validation_split leaves, as
  Keras splits them. Where the batch size divides the examples, that is
  run_classifier's count, int(examples / batch size * epochs).

  Raises:
    ValueError: a dataset of unknown or infinite size, or a generator,
      without steps_per_epoch.
  """
  arguments = inspect.signature(keras.Model.fit).bind(
      None, x, *fit_args, **fit_kwargs).arguments
  epochs = arguments.get("epochs", 1) - arguments.get("initial_epoch", 0)
  if arguments.get("steps_per_epoch"):
    return arguments["steps_per_epoch"] * epochs
  if isinstance(x, (tf.data.Dataset, keras.utils.PyDataset)):
    batches = _batches_in(x)
    if batches is None:
      raise ValueError(f"{model_name}.fit: a dataset of unknown or infinite "
                       "size; pass steps_per_epoch, or compile() an "
                       "optimizer")
    return batches * epochs
  examples = examples_in(x)
  if examples is None:
    raise ValueError(f"{model_name}.fit: x of unknown size; pass "
                     "steps_per_epoch, or compile() an optimizer")
  # Keras' split: the first floor(examples * (1 - validation_split)) train.
  examples = math.floor(examples * (1 - arguments.get("validation_split", 0)))
  batch_size = arguments.get("batch_size") or KERAS_BATCH_SIZE
  return math.ceil(examples / batch_size) * epochs


def _batches_in(dataset):
  """A tf.data.Dataset's or a PyDataset's batches, None where unknown or
  infinite."""
  if isinstance(dataset, keras.utils.PyDataset):
    return dataset.num_batches
  batches = int(dataset.cardinality())
  return batches if batches >= 0 else None
