"""Dense: keras.layers.Dense whose LoRA adapters a .keras file keeps, and
that quantize() quantizes as Keras' own."""

import keras


@keras.saving.register_keras_serializable(package="bert_tf")
class Dense(keras.layers.Dense):
  """keras.layers.Dense whose LoRA adapters (enable_lora) a .keras file
  keeps as they are, beside the frozen kernel.

  Keras' own merges the adapters into the kernel when it saves and zeroes
  both when it loads: the outputs stay, but with both adapters zero no
  gradient reaches either, and a reloaded model's LoRA training stalls.

  Keras' quantize() passes over subclasses of its Dense, whose call may
  compute otherwise than a quantized kernel would; this one computes as
  Keras' does, so it is quantized as Keras' is (its subclasses are not).
  """

  def quantize(self, mode=None, type_check=True, config=None):
    if type_check and type(self) is not Dense:
      raise self._not_implemented_error(self.quantize)
    super().quantize(mode, type_check=False, config=config)

  def save_own_variables(self, store):
    if not self.lora_enabled or self.quantization_mode is not None:
      super().save_own_variables(store)
      return
    # Keras' order (kernel, bias), the kernel without the adapters.
    store["0"] = self._kernel
    if self.bias is not None:
      store["1"] = self.bias
    store["lora_kernel_a"] = self.lora_kernel_a
    store["lora_kernel_b"] = self.lora_kernel_b

  def load_own_variables(self, store):
    super().load_own_variables(store)
    if self.lora_enabled and "lora_kernel_a" in store:
      self.lora_kernel_a.assign(store["lora_kernel_a"])
      self.lora_kernel_b.assign(store["lora_kernel_b"])
