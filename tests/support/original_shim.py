"""tensorflow.compat.v1 with what google-research/bert takes from tf.contrib
and tf.layers, so that its code runs unchanged on TensorFlow 2: the contrib
layer_norm (the same computation, epsilon 1e-12) and tf.layers.dense (the
same variables, kernel and bias). Installed as sys.modules["tensorflow"] by
the tools that run the original (tests/support/original_extract_features.py, the
fixture generators)."""

import types


def shimmed_tensorflow():
  """tf.compat.v1 in graph mode, with contrib.layers.layer_norm and
  layers.dense."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  v1 = tf.compat.v1
  v1.disable_eager_execution()

  def layer_norm(inputs, begin_norm_axis=-1, begin_params_axis=-1,
                 scope=None):
    del begin_norm_axis, begin_params_axis  # modeling.py passes -1, -1
    with v1.variable_scope(scope, default_name="LayerNorm"):
      depth = inputs.shape[-1]
      beta = v1.get_variable("beta", [depth],
                             initializer=v1.zeros_initializer())
      gamma = v1.get_variable("gamma", [depth],
                              initializer=v1.ones_initializer())
      mean, variance = tf.nn.moments(inputs, [-1], keepdims=True)
      return tf.nn.batch_normalization(inputs, mean, variance, beta, gamma,
                                       1e-12)

  def dense(inputs, units, activation=None, name=None,
            kernel_initializer=None):
    with v1.variable_scope(name, default_name="dense"):
      kernel = v1.get_variable("kernel", [inputs.shape[-1], units],
                               initializer=kernel_initializer)
      bias = v1.get_variable("bias", [units],
                             initializer=v1.zeros_initializer())
      outputs = tf.matmul(inputs, kernel) + bias
      return activation(outputs) if activation else outputs

  v1.layers = types.SimpleNamespace(dense=dense)
  v1.contrib = types.SimpleNamespace(
      layers=types.SimpleNamespace(layer_norm=layer_norm))
  return v1
