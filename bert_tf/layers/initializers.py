"""The weight initialiser every BERT weight matrix uses."""

import keras


def truncated_normal(initializer_range):
  """Truncated normal (cut at two stddevs) as the original create_initializer."""
  return keras.initializers.TruncatedNormal(stddev=initializer_range)
