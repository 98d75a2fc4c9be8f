"""LoRA: low-rank adapters on the encoder's Dense layers, the rest of the
encoder frozen, the task head trained; and the model with the adapters
merged into its kernels, which every file that leaves Keras holds."""

import math
import numbers

from bert_tf.checkpoints import adapters
from bert_tf.checkpoints.names import first_repeated

# A TransformerBlock's Dense layers, by the name enable_lora's targets use.
TARGETS = {
    "query": lambda block: block.attention.query,
    "key": lambda block: block.attention.key,
    "value": lambda block: block.attention.value,
    "attention_output": lambda block: block.attention_output_dense,
    "intermediate": lambda block: block.intermediate_dense,
    "output": lambda block: block.output_dense,
}


def enable(model, rank, targets, alpha):
  """Freezes model's encoder and adds rank-`rank` adapters (Keras'
  Dense.enable_lora, scaled by alpha / rank) to the Dense layers `targets`
  names in each transformer block; the task head, and the encoder's weights
  that load_checkpoint left at their initialisation (model.new_weights: a
  BertForMaskedLM folder's missing pooler), stay trainable. Every argument
  is checked before the model changes.

  Returns:
    The model's `lora` ({"rank", "targets", "alpha"}).

  Raises:
    ValueError: a rank over the hidden size (the model checks that it is
      a positive integer), an alpha not a positive number, targets not
      some of TARGETS (or one named twice), a model quantized, with
      adapters already, or whose encoder is frozen.
  """
  name = f"{type(model).__name__}.enable_lora"
  encoder = getattr(model, "encoder", model)
  if rank > encoder.config.hidden_size:  # A @ B would be no lower rank
    raise ValueError(f"{name}: rank={rank} is over the hidden_size, "
                     f"{encoder.config.hidden_size}")
  targets = _checked_targets(targets, name)
  alpha = int(rank) if alpha is None else _checked_alpha(alpha, name)
  if model.quantized_to:
    raise ValueError(f"{name}: the model is quantized "
                     f"({model.quantized_to}); add adapters to the float "
                     "model")
  if model.lora is not None:
    raise ValueError(f"{name}: it has adapters already (rank "
                     f"{model.lora['rank']})")
  if not encoder.trainable:
    raise ValueError(f"{name}: {type(model).__name__}'s encoder is frozen "
                     "(it reads features); adapters in it would not train")
  new_weights = set(getattr(model, "new_weights", ()))
  for variable in encoder.weights:
    variable.trainable = variable.path in new_weights
  for block in encoder.transformer_layers:
    for target in targets:
      TARGETS[target](block).enable_lora(int(rank), lora_alpha=alpha)
  return {"rank": int(rank), "targets": list(targets), "alpha": alpha}


def config_of(model):
  """model.lora as get_config keeps it: with "new_weights", the paths of
  the encoder weights that train beside the adapters (see enable), where
  there are any, so that from_config trains the same weights."""
  encoder = getattr(model, "encoder", model)
  trained = [variable.path for variable in encoder.trainable_weights
             if "lora_kernel" not in variable.path]
  return {**model.lora, **({"new_weights": trained} if trained else {})}


def _checked_targets(targets, name):
  """targets as a tuple of TARGETS' names (one name alone is taken as
  one)."""
  expected = f"expected some of {', '.join(TARGETS)}"
  if isinstance(targets, str):
    targets = (targets,)
  try:
    targets = tuple(targets)
  except TypeError:
    raise ValueError(f"{name}: targets={targets!r}; {expected}") from None
  unknown = [target for target in targets
             if not isinstance(target, str) or target not in TARGETS]
  if unknown or not targets:
    raise ValueError(f"{name}: targets={targets!r}; {expected}")
  repeated = first_repeated(targets)
  if repeated is not None:
    raise ValueError(f"{name}: targets={targets!r} names {repeated!r} "
                     "twice")
  return targets


def _checked_alpha(alpha, name):
  """alpha as a Python number (a NumPy one would not go in get_config's
  JSON), where it is a finite number > 0."""
  try:  # float() of an integer past float's range overflows
    finite = not isinstance(alpha, bool) and isinstance(
        alpha, numbers.Real) and 0 < float(alpha) < math.inf
  except OverflowError:
    finite = False
  if not finite:
    raise ValueError(f"{name}: alpha={alpha!r} must be a number > 0, or "
                     "None for the rank")
  return int(alpha) if isinstance(alpha, numbers.Integral) else float(alpha)


def merged(model):
  """A copy of the model without adapters, each merged into its kernel
  (kernel + alpha / rank * A @ B): the same outputs, plain weights."""
  kernels = adapters.merged_kernels(model)
  adapter_ids = {id(variable) for layer in adapters.adapted_layers(model)
                 for variable in (layer.lora_kernel_a, layer.lora_kernel_b)}
  config = model.get_config()
  del config["lora"]
  preprocessor = config.pop("preprocessor", None) and model.preprocessor
  arguments = type(model).constructor_arguments(config)
  if preprocessor is not None:  # its vocabulary is no part of its config
    arguments["preprocessor"] = preprocessor
  copy = type(model).built_in(arguments.pop("dtype", None), **arguments)
  copy.set_weights([kernels.get(id(variable), variable)
                    for variable in model.weights
                    if id(variable) not in adapter_ids])
  return copy
