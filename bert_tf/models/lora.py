"""LoRA: low-rank adapters on the encoder's Dense layers, the rest of the
encoder frozen, the task head trained; and the model with the adapters
merged into its kernels, which every file that leaves Keras holds."""

from bert_tf.checkpoints import adapters

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
  names in each transformer block; the task head stays trainable.

  Raises:
    ValueError: a rank over the hidden size (a .keras config's, say), a
      target not in TARGETS, a model quantized or with adapters already
      (the model checks that the rank is a positive integer).
  """
  name = type(model).__name__
  unknown = [target for target in targets if target not in TARGETS]
  if unknown or not targets:
    raise ValueError(f"{name}.enable_lora: targets={tuple(targets)!r}; "
                     f"expected some of {', '.join(TARGETS)}")
  if model.quantized_to:
    raise ValueError(f"{name}.enable_lora: the model is quantized "
                     f"({model.quantized_to}); add adapters to the float "
                     "model")
  if model.lora is not None:
    raise ValueError(f"{name}.enable_lora: it has adapters already "
                     f"(rank {model.lora['rank']})")
  encoder = getattr(model, "encoder", model)
  if rank > encoder.config.hidden_size:  # A @ B would be no lower rank
    raise ValueError(f"{name}.enable_lora: rank={rank} is over the "
                     f"hidden_size, {encoder.config.hidden_size}")
  for variable in encoder.weights:
    variable.trainable = False
  for block in encoder.transformer_layers:
    for target in targets:
      TARGETS[target](block).enable_lora(rank, lora_alpha=alpha)


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
