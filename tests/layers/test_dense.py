"""Dense: quantized as Keras quantizes its own Dense (its LoRA adapters in
a .keras file: tests/models/test_lora.py)."""

import keras
import numpy as np
import pytest

from bert_tf.layers.dense import Dense


def built(layer_class, weights=None):
  layer = layer_class(6)
  layer.build((None, 5))
  if weights is not None:
    layer.set_weights(weights)
  return layer


@pytest.mark.parametrize("mode", ["int8", "int4", "float8"])
def test_quantizes_as_keras_dense(mode):
  dense = built(Dense)
  keras_dense = built(keras.layers.Dense, dense.get_weights())
  dense.quantize(mode)
  keras_dense.quantize(mode)
  assert dense.quantization_mode == mode
  x = np.random.default_rng(0).normal(size=(3, 5)).astype(np.float32)
  np.testing.assert_array_equal(dense(x), keras_dense(x))
  saved, keras_saved = {}, {}
  dense.save_own_variables(saved)
  keras_dense.save_own_variables(keras_saved)
  assert saved.keys() == keras_saved.keys()
  for key, value in saved.items():
    np.testing.assert_array_equal(value, keras_saved[key])


def test_a_subclass_is_left_to_quantize_itself():
  """As Keras' Dense: a subclass may compute otherwise than the quantized
  kernel would."""

  class Doubled(Dense):

    def call(self, inputs):
      return 2 * super().call(inputs)

  with pytest.raises(NotImplementedError):
    built(Doubled).quantize("int8")
