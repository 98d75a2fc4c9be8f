"""Dense layers with LoRA adapters (Keras' enable_lora) as checkpoints see
them: a checkpoint holds each kernel with its adapters merged in, and
loading one starts the adapters again."""

import keras


def adapted_layers(model):
  """The Dense layers inside model (a Keras layer or model) that have LoRA
  adapters."""
  return [layer for layer in model._flatten_layers()  # pylint: disable=protected-access
          if getattr(layer, "lora_enabled", False)]


def merged_kernels(model):
  """{id(a kernel variable): that kernel with its adapters merged in} for
  the model's Dense layers with adapters: what a checkpoint holds."""
  return {id(layer._kernel): layer.kernel  # pylint: disable=protected-access
          for layer in adapted_layers(model)}


def restart_adapters(model):
  """Zeroes each adapter's second matrix (B), as enable_lora starts it:
  the model then computes its kernels' function alone (a checkpoint's,
  whose kernels hold the adapters merged)."""
  for layer in adapted_layers(model):
    layer.lora_kernel_b.assign(keras.ops.zeros(layer.lora_kernel_b.shape))
