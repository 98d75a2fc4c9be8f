"""The train and eval loops every runner shares, on any tf.distribute strategy.

One training step, on each replica:
  1. every loss term's denominator is summed over the global batch
     (all replicas; see bert_tf/objectives/);
  2. the replica's batch is split into gradient_accumulation_steps
     micro-batches, whose gradients are summed;
  3. the gradients are summed over replicas, then clipped and applied by the
     optimizer, which therefore sees the gradient one device would compute on
     the whole global batch.
iterations_per_loop steps run inside one tf.function between host visits,
as the original's TPUEstimator loop did; after each loop the chief logs
progress, writes TensorBoard summaries and, every save_checkpoints_steps
and at the end, a checkpoint in the release format.
"""

import dataclasses
import logging
import os
import time

import keras
import tensorflow as tf

from bert_tf.checkpoints.loading import load_checkpoint
from bert_tf.files import storage
from bert_tf.optimization import optimizers, precision
from bert_tf.training import distribution
from bert_tf.training.checkpoint_manager import CheckpointManager
from bert_tf.training.progress import Progress

logger = logging.getLogger(__name__)

SUM = tf.distribute.ReduceOp.SUM


@dataclasses.dataclass
class TrainingOptions:
  """How to train; the runners fill it from their flags."""
  num_train_steps: int
  save_checkpoints_steps: int = 1000
  iterations_per_loop: int = 1000
  gradient_accumulation_steps: int = 1
  keep_checkpoint_max: int = 5
  use_xla: bool = False
  dtype: str = "float32"


class Trainer:
  """Trains and evaluates a model for an objective, checkpointing as it goes.
  restore() comes first: it loads the weights, then builds the optimizer for
  those that train.

  Args:
    strategy: the tf.distribute.Strategy that the model and optimizer were
      created under.
    model: a bert_tf model.
    optimizer: an AdamWeightDecay or Lamb (its slots are checkpointed).
    objective: a bert_tf.objectives Objective (PretrainingObjective()).
    output_dir: where checkpoints, summaries and results go.
    options: TrainingOptions.
  """

  def __init__(self, strategy, model, optimizer, objective, output_dir,
               options):
    self.strategy = strategy
    self.model = model
    self.optimizer = optimizer
    self.objective = objective
    self.output_dir = output_dir
    self.options = options
    # _step sums the replicas' gradients itself, before clipping.
    optimizer.gradients_summed_by_caller = True
    with strategy.scope():
      self._updater = precision.with_loss_scaling(optimizer, options.dtype)
    self.checkpoints = CheckpointManager(model, optimizer, output_dir,
                                         options.keep_checkpoint_max)
    self.is_chief = distribution.is_chief(strategy)
    self._gradients = (tf.function(self._micro_batch_gradients,
                                   jit_compile=True)
                       if options.use_xla else self._micro_batch_gradients)
    self._eval_step = tf.function(self._eval_sums,
                                  jit_compile=options.use_xla)

  @property
  def global_step(self):
    return int(self.optimizer.iterations.numpy())

  def restore(self, init_checkpoint=None, slots=True, lora_rank=None):
    """Resumes from output_dir's newest checkpoint, else loads init_checkpoint
    (a ModelDirectory, or any location loading.load_checkpoint
    takes): a head of another number of labels there is left out, and the
    model's new one trains (its new_head), as
    from_pretrained starts one. Then builds the optimizer for the weights
    that train.

    Args:
      slots: whether output_dir's optimizer slots are restored (to train
        on; see CheckpointManager.restore_latest).
      lora_rank: LoRA adapters of this rank (BertKerasModel.enable_lora),
        added once the model knows which of its encoder's weights train
        beside them and the head: those init_checkpoint lacked (a
        BertForMaskedLM folder's pooler), which a resumed run finds as
        the ones its checkpoint holds slots for. A checkpoint holds the
        adapters merged into the kernels: a resumed run goes on from those
        with new adapters. None: none.

    Returns:
      The global step training continues from.
    """
    resuming = bool(self.checkpoints.kept)
    if resuming and lora_rank is not None:
      self.model.new_weights = self.checkpoints.trained_weights()
    elif not resuming and init_checkpoint:
      load_checkpoint(self.model, init_checkpoint, new_head=True)
    with self.strategy.scope():  # the adapters' and the slots' variables
      if lora_rank is not None:
        self.model.enable_lora(lora_rank)
      self._updater.build(self.model.trainable_variables)
    return self.checkpoints.restore_latest(slots) if resuming else 0

  def train(self, dataset):
    """Trains until options.num_train_steps, from the current global step.

    Args:
      dataset: batches of the global batch size (drop_remainder=True).
    """
    options = self.options
    batch_size = _batch_size(dataset)
    self.check_batch_size(batch_size)
    step = self.global_step
    if step >= options.num_train_steps:
      logger.info("Already trained to step %d of %d", step,
                  options.num_train_steps)
      return
    iterator = self.iterator(dataset)
    writer = self._summary_writer(self.output_dir)
    progress = Progress(step, options.num_train_steps, batch_size)
    logger.info("***** Training from step %d to %d, batch size %d on %d "
                "replicas *****", step, options.num_train_steps, batch_size,
                self.strategy.num_replicas_in_sync)
    while step < options.num_train_steps:
      next_save = (step // options.save_checkpoints_steps + 1) \
          * options.save_checkpoints_steps
      loop_end = min(options.num_train_steps,
                     step + options.iterations_per_loop, next_save)
      results = self.train_steps(iterator, loop_end - step)
      previous, step = step, self.global_step
      results["learning_rate"] = float(self.optimizer.learning_rate)
      progress.log(step, results)
      with writer.as_default(step=step):
        for name, value in results.items():
          tf.summary.scalar(name, value)
        tf.summary.scalar("examples_per_sec", progress.examples_per_sec)
      if (step // options.save_checkpoints_steps
          > previous // options.save_checkpoints_steps
          or step >= options.num_train_steps):
        self._save(step)
    writer.flush()

  def check_batch_size(self, batch_size):
    """Raises ValueError unless replicas and micro-batches can share it."""
    parts = self.strategy.num_replicas_in_sync * \
        self.options.gradient_accumulation_steps
    if batch_size % parts:
      raise ValueError(
          f"train batch size {batch_size} is not divisible by "
          f"{self.strategy.num_replicas_in_sync} replicas x "
          f"gradient_accumulation_steps="
          f"{self.options.gradient_accumulation_steps}")

  def iterator(self, dataset):
    """An iterator over a dataset of global batches, split over replicas."""
    return iter(self.strategy.experimental_distribute_dataset(dataset))

  def train_steps(self, iterator, num_steps):
    """num_steps training steps in one tf.function, nothing else (no
    checkpoint, summary or log).

    Returns:
      {"loss": mean loss, metric: value} over those steps.
    """
    return _means(self._train_loop(iterator, tf.constant(num_steps)),
                  num_steps)

  def evaluate(self, dataset, steps):
    """The objective's loss and metrics over `steps` batches.

    Returns:
      {"global_step": int, "loss": mean batch loss, each metric: float}, as
      the original's eval_results.txt holds them.
    """
    iterator = self.iterator(dataset)
    logger.info("***** Evaluating %d batches at step %d *****", steps,
                self.global_step)
    start = time.time()
    totals = self._eval_loop(iterator, tf.constant(steps))
    results = {"global_step": self.global_step, **_means(totals, steps)}
    logger.info("Evaluated %d batches in %.1f s", steps, time.time() - start)
    writer = self._summary_writer(os.path.join(self.output_dir, "eval"))
    with writer.as_default(step=self.global_step):
      for name, value in results.items():
        if name != "global_step":
          tf.summary.scalar(name, value)
    writer.flush()
    return results

  # --- inside tf.function -------------------------------------------------

  @tf.function
  def _train_loop(self, iterator, num_steps):
    """num_steps (>= 1) training steps; the sums of their losses and metrics."""
    return _summed(lambda: self._reduce(self.strategy.run(
        self._replica_train_step, args=(next(iterator),))), num_steps)

  @tf.function
  def _eval_loop(self, iterator, num_steps):
    """num_steps (>= 1) eval batches; the sums of their losses and metrics."""
    def step():
      sums = self._reduce(self.strategy.run(self._eval_step,
                                            args=(next(iterator),)))
      # Each batch's total loss, as the original's eval "loss" averages it.
      sums["loss"] = tf.add_n([
          sums["metrics"][term][0] / (sums["metrics"][term][1] + epsilon)
          for term, epsilon in self.objective.denominator_epsilons.items()])
      return sums
    return _summed(step, num_steps)

  def _replica_train_step(self, features):
    context = tf.distribute.get_replica_context()
    denominators = context.all_reduce(
        SUM, self.objective.loss_denominators(features))
    denominators = {term: value + self.objective.denominator_epsilons[term]
                    for term, value in denominators.items()}
    accumulation = self.options.gradient_accumulation_steps
    if accumulation == 1:
      gradients, sums = self._gradients(features, denominators)
    else:
      micro_batches = tf.nest.map_structure(
          lambda tensor: tf.reshape(
              tensor, [accumulation, -1] + _dims(tensor)[1:]), features)
      gradients, sums = self._gradients(
          tf.nest.map_structure(lambda tensor: tensor[0], micro_batches),
          denominators)
      for index in tf.range(1, accumulation):
        more_gradients, more_sums = self._gradients(
            tf.nest.map_structure(lambda tensor: tensor[index],
                                  micro_batches), denominators)
        gradients = [a + b for a, b in zip(gradients, more_gradients)]
        sums = tf.nest.map_structure(tf.add, sums, more_sums)
    gradients = context.all_reduce(SUM, gradients)
    self._updater.apply(gradients, self._trained_variables)
    return sums

  def _micro_batch_gradients(self, features, denominators):
    """Gradients of this part's share of the global loss, and its sums."""
    variables = self.model.trainable_variables
    with tf.GradientTape() as tape:
      outputs = self.model(features, training=True)
      numerators = self.objective.loss_numerators(outputs, features)
      loss = tf.add_n([numerators[term] / denominators[term]
                       for term in numerators])
      scaled_loss = self._updater.scale_loss(loss)
    gradients = tape.gradient(scaled_loss, variables)
    # Variables the loss does not reach (run_squad's pooler) are left
    # alone, as the original's optimizer skips a None gradient: no update,
    # no weight decay. Known when the step is traced.
    self._trained_variables = [
        variable for variable, gradient in zip(variables, gradients)
        if gradient is not None]
    gradients = [tf.convert_to_tensor(gradient) for gradient in gradients
                 if gradient is not None]
    return gradients, {"loss": loss,
                       "metrics": self._metric_sums(outputs, features,
                                                    numerators)}

  def _eval_sums(self, features):
    outputs = self.model(features, training=False)
    numerators = self.objective.loss_numerators(outputs, features)
    return {"metrics": self._metric_sums(outputs, features, numerators)}

  def _metric_sums(self, outputs, features, numerators):
    """Every loss term as a (sum, count) metric, plus the objective's own."""
    denominators = self.objective.loss_denominators(features)
    return {**{term: (numerators[term], denominators[term])
               for term in numerators},
            **self.objective.metric_sums(outputs, features)}

  def _reduce(self, per_replica):
    return tf.nest.map_structure(
        lambda value: self.strategy.reduce(SUM, value, axis=None),
        per_replica)

  # --- host side ------------------------------------------------------------

  def _save(self, step):
    if self.is_chief:
      self.checkpoints.save(step)

  def _summary_writer(self, directory):
    if not self.is_chief:
      return tf.summary.create_noop_writer()
    storage.makedirs(directory)
    return tf.summary.create_file_writer(directory)


def create_trainer(strategy, build_model, objective, output_dir, options,
                   learning_rate, num_warmup_steps, optimizer="adamw",
                   seed=None, init_checkpoint=None, train_batch_size=None,
                   lora_rank=None):
  """A Trainer for the model build_model() returns, restored as the original
  would start: from output_dir's newest checkpoint, else init_checkpoint,
  with LoRA adapters of rank lora_rank where it is not None (see
  Trainer.restore).

  The seed is applied first; the model and the optimizer (with the
  learning rate's warmup and linear decay to options.num_train_steps) are
  created under the strategy, in options.dtype.

  Args:
    train_batch_size: the run's when it trains, checked against the
      replicas and micro-batches before anything is restored; None for a
      run that only evaluates or predicts, which restores no optimizer
      slots.

  Raises:
    ValueError: naming the bad setting or checkpoint.
  """
  if seed is not None:
    keras.utils.set_random_seed(seed)
  with strategy.scope(), precision.dtype_policy(options.dtype):
    model = build_model()
    model_optimizer = optimizers.create_optimizer(
        learning_rate, max(options.num_train_steps, 1), num_warmup_steps,
        optimizer)
  trainer = Trainer(strategy, model, model_optimizer, objective, output_dir,
                    options)
  if train_batch_size is not None:
    trainer.check_batch_size(train_batch_size)
  trainer.restore(init_checkpoint, slots=train_batch_size is not None,
                  lora_rank=lora_rank)
  return trainer


def _dims(tensor):
  """tensor's shape: its static dimensions, tensors for the unknown ones (a
  batch's length, when batches are cut to their own)."""
  return [dim if dim is not None else tf.shape(tensor)[axis]
          for axis, dim in enumerate(tensor.shape.as_list())]


def _summed(step, num_steps):
  """The element-wise sum of step()'s results over num_steps (>= 1) calls,
  in a graph loop (the first call gives the structure)."""
  totals = step()
  for _ in tf.range(num_steps - 1):
    totals = tf.nest.map_structure(tf.add, totals, step())
  return totals


def _means(totals, num_steps):
  """{"loss": mean per step, metric: sum / count} as Python floats."""
  results = {}
  if "loss" in totals:
    results["loss"] = float(totals["loss"]) / num_steps
  for name, (total, count) in totals["metrics"].items():
    results[name] = float(total) / float(count) if float(count) else 0.0
  return results


def _batch_size(dataset):
  """The static batch size of a dataset batched with drop_remainder."""
  size = tf.nest.flatten(dataset.element_spec)[0].shape[0]
  if size is None:
    raise ValueError("the training dataset must be batched with "
                     "drop_remainder=True")
  return size
