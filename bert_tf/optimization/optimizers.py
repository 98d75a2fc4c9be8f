"""The original BERT optimizer: AdamWeightDecay with warmup and linear decay.

optimization.py of google-research/bert, exactly: Adam without bias
correction, decoupled weight decay 0.01 on every variable whose original
name contains none of LayerNorm, layer_norm, bias; gradients clipped to a
global norm of 1.0; a learning rate warming up linearly over
num_warmup_steps, then decaying linearly to 0 at num_train_steps.
"""

import re

import keras
import tensorflow as tf
from keras import ops


EXCLUDE_FROM_WEIGHT_DECAY = ("LayerNorm", "layer_norm", "bias")


@keras.saving.register_keras_serializable(package="bert_tf")
class WarmupPolynomialDecay(keras.optimizers.schedules.LearningRateSchedule):
  """The original create_optimizer's learning rate for an update.

  polynomial_decay(init_lr, global_step, num_train_steps, end 0, power 1),
  replaced by init_lr * global_step / num_warmup_steps while global_step <
  num_warmup_steps. The original increments global_step in the same session
  run as the update, and its learning rate reads the incremented value (the
  reference trajectory in ../shared shows it: the first update moves the
  weights), so update number `step` (0-based, Keras' iterations) uses
  global_step = step + 1.
  """

  def __init__(self, init_lr, num_train_steps, num_warmup_steps):
    self.init_lr = init_lr
    self.num_train_steps = num_train_steps
    self.num_warmup_steps = num_warmup_steps

  def __call__(self, step):
    step = ops.cast(step, "float32") + 1.0
    done = ops.minimum(step, self.num_train_steps) / self.num_train_steps
    learning_rate = self.init_lr * (1.0 - done)
    if self.num_warmup_steps:
      is_warmup = ops.cast(step < self.num_warmup_steps, "float32")
      warmup = self.init_lr * (step / self.num_warmup_steps)
      learning_rate = (1.0 - is_warmup) * learning_rate + is_warmup * warmup
    return learning_rate

  def get_config(self):
    return {"init_lr": self.init_lr, "num_train_steps": self.num_train_steps,
            "num_warmup_steps": self.num_warmup_steps}


@keras.saving.register_keras_serializable(package="bert_tf")
class AdamWeightDecay(keras.optimizers.Optimizer):
  """The original AdamWeightDecayOptimizer as a Keras 3 optimizer.

  Its slots are the original's adam_m and adam_v. A variable is decayed
  unless its Keras path matches one of `exclude_from_weight_decay`, as the
  original matched its variable names: bert_tf's layers name their layer
  norms and biases so that the two agree (tested on every model). Being
  data, the rule travels in get_config, so a compiled model saved as a
  .keras file decays the same variables when loaded.

  Under a tf.distribute strategy, the replicas' gradients are summed before
  they are clipped, so that clipping sees the global gradient's norm, as
  one device would (Keras' own order clips each replica's gradient, then
  sums): in Keras' fit this optimizer sums them; bert_tf.training.Trainer
  sums them itself and sets `gradients_summed_by_caller`.

  Args:
    learning_rate: a float or a LearningRateSchedule of the step.
    weight_decay_rate, beta_1, beta_2, epsilon: as the original.
    exclude_from_weight_decay: regular expressions of the variable paths
      left undecayed.
    global_clipnorm: gradients are clipped to this global norm first.
  """

  gradients_summed_by_caller = False

  def __init__(self, learning_rate, weight_decay_rate=0.01, beta_1=0.9,
               beta_2=0.999, epsilon=1e-6,
               exclude_from_weight_decay=EXCLUDE_FROM_WEIGHT_DECAY,
               global_clipnorm=1.0, name="AdamWeightDecay", **kwargs):
    super().__init__(learning_rate=learning_rate,
                     global_clipnorm=global_clipnorm, name=name, **kwargs)
    self.weight_decay_rate = weight_decay_rate
    self.beta_1 = beta_1
    self.beta_2 = beta_2
    self.epsilon = epsilon
    self.exclude_from_weight_decay = tuple(exclude_from_weight_decay)

  def is_decayed(self, variable):
    """Whether weight decay applies to `variable` (decided by its path)."""
    path = getattr(variable, "path", variable.name)
    return not any(re.search(pattern, path)
                   for pattern in self.exclude_from_weight_decay)

  def build(self, var_list):
    if self.built:
      return
    super().build(var_list)
    self.adam_m = [self.add_variable_from_reference(variable, "adam_m")
                   for variable in var_list]
    self.adam_v = [self.add_variable_from_reference(variable, "adam_v")
                   for variable in var_list]
    # Decided here, from the Keras variables: update_step is given their
    # tf.Variables, which do not carry the path.
    self._decayed = [self.is_decayed(variable) for variable in var_list]

  def _clip_gradients(self, grads):
    # An embedding lookup's gradient is IndexedSlices whose repeated rows
    # would be squared one by one; the original clipped the summed, dense
    # gradient, whose norm is what clipping must see.
    grads = [tf.convert_to_tensor(grad)
             if isinstance(grad, tf.IndexedSlices) else grad
             for grad in grads]
    if not self.gradients_summed_by_caller:
      grads = _summed_over_replicas(grads)
    if not self.global_clipnorm:
      return grads
    # The original's call: its norm sums each gradient's l2_loss, one pass
    # that writes no squared copy of the gradient (Keras' own squares each).
    return tf.clip_by_global_norm(grads, self.global_clipnorm)[0]

  def _all_reduce_sum_gradients(self, grads_and_vars):
    return grads_and_vars  # summed already (see _clip_gradients)

  def slots(self, variable):
    """(adam_m, adam_v) of a variable."""
    index = self._get_variable_index(variable)
    return self.adam_m[index], self.adam_v[index]

  def decays(self, variable):
    """Whether this (built) optimizer applies weight decay to `variable`."""
    return self._decayed[self._get_variable_index(variable)]

  def update_step(self, gradient, variable, learning_rate):
    """The original's update in TensorFlow's fused Adam kernel: one pass
    over the variable and its slots instead of a dozen element-wise ops.

    With both beta powers 0 the kernel applies no bias correction, as the
    original; it computes m + (g - m)(1 - beta_1), the original's
    beta_1 m + (1 - beta_1) g up to the last bit. The weight decay,
    lr * rate * w, is taken off first: the original's
    w - lr (adam + rate w), in the other order. A variable of a narrower
    float takes _update_in_float32.
    """
    if variable.dtype != "float32":
      self._update_in_float32(gradient, variable, learning_rate)
      return
    m, v = self.slots(variable)
    learning_rate = ops.cast(learning_rate, variable.dtype)
    if self.weight_decay_rate and self.decays(variable):
      self.assign_sub(variable,
                      learning_rate * self.weight_decay_rate * variable)
    zero = ops.zeros((), variable.dtype)
    tf.raw_ops.ResourceApplyAdam(
        var=variable.handle, m=m.handle, v=v.handle, beta1_power=zero,
        beta2_power=zero, lr=learning_rate,
        beta1=ops.cast(self.beta_1, variable.dtype),
        beta2=ops.cast(self.beta_2, variable.dtype),
        epsilon=ops.cast(self.epsilon, variable.dtype),
        grad=ops.cast(gradient, variable.dtype))

  def _update_in_float32(self, gradient, variable, learning_rate):
    """The update of `variable` and its slots computed in float32, then
    rounded once into each: in bfloat16 beta_2 = 0.999 is 1, which would
    keep adam_v at 0 (Adam's steps lr * m / epsilon, LAMB's bias
    correction a division by 0). Keras trains a model's bfloat16 weights
    (from_pretrained(dtype="bfloat16")) with its optimizer as they are."""
    targets = (variable, *self.slots(variable))
    updated = self._updated(
        ops.cast(gradient, "float32"),
        *(ops.cast(target, "float32") for target in targets),
        ops.cast(learning_rate, "float32"), self.decays(variable))
    for target, value in zip(targets, updated):
      self.assign(target, ops.cast(value, target.dtype))

  def _updated(self, gradient, weights, m, v, learning_rate, decays):
    """(weights, adam_m, adam_v) after the original's update, as plain
    operations."""
    m, v = self._moments(gradient, m, v)
    update = m / (ops.sqrt(v) + self.epsilon)
    if self.weight_decay_rate and decays:
      update += self.weight_decay_rate * weights
    return weights - learning_rate * update, m, v

  def _moments(self, gradient, m, v):
    """adam_m and adam_v after a step of `gradient`."""
    return (self.beta_1 * m + (1.0 - self.beta_1) * gradient,
            self.beta_2 * v + (1.0 - self.beta_2) * ops.square(gradient))

  def get_config(self):
    config = super().get_config()
    config.update(weight_decay_rate=self.weight_decay_rate,
                  beta_1=self.beta_1, beta_2=self.beta_2,
                  epsilon=self.epsilon,
                  exclude_from_weight_decay=list(
                      self.exclude_from_weight_decay))
    return config


@keras.saving.register_keras_serializable(package="bert_tf")
class Lamb(AdamWeightDecay):
  """LAMB (You et al., 2019), as Model Garden's: Adam with bias correction,
  decoupled weight decay, and each update scaled by ||weights|| / ||update||.

  Variables not decayed are not layer-adapted either (Model Garden's
  default). The slots keep the names adam_m and adam_v.
  """

  def update_step(self, gradient, variable, learning_rate):
    self._update_in_float32(gradient, variable, learning_rate)

  def _updated(self, gradient, weights, m, v, learning_rate, decays):
    step = ops.cast(self.iterations + 1, "float32")
    next_m, next_v = self._moments(gradient, m, v)
    m_hat = next_m / (1.0 - ops.power(self.beta_1, step))
    v_hat = next_v / (1.0 - ops.power(self.beta_2, step))
    update = m_hat / (ops.sqrt(v_hat) + self.epsilon)
    ratio = 1.0
    if decays:
      if self.weight_decay_rate:
        update += self.weight_decay_rate * weights
      weight_norm = ops.norm(ops.reshape(weights, [-1]))
      update_norm = ops.norm(ops.reshape(update, [-1]))
      ratio = ops.where(
          weight_norm > 0,
          ops.where(update_norm > 0, weight_norm / update_norm, 1.0), 1.0)
    return weights - ratio * learning_rate * update, next_m, next_v


def _summed_over_replicas(grads):
  """Each gradient summed over the replicas of a tf.distribute strategy
  (as they are; there is one replica outside a strategy's run)."""
  context = tf.distribute.get_replica_context()
  if context is None or context.num_replicas_in_sync == 1:
    return grads
  summed = iter(context.all_reduce(
      tf.distribute.ReduceOp.SUM, [grad for grad in grads if grad is not None]))
  return [None if grad is None else next(summed) for grad in grads]


OPTIMIZERS = {"adamw": AdamWeightDecay, "lamb": Lamb}


def create_optimizer(init_lr, num_train_steps, num_warmup_steps,
                     optimizer="adamw"):
  """The original create_optimizer's optimizer.

  optimizer: "adamw" (the original's AdamWeightDecay) or "lamb".
  """
  if optimizer not in OPTIMIZERS:
    raise ValueError(f"--optimizer={optimizer}: expected one of "
                     f"{sorted(OPTIMIZERS)}")
  return OPTIMIZERS[optimizer](learning_rate=WarmupPolynomialDecay(
      init_lr, num_train_steps, num_warmup_steps))
