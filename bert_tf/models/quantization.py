"""Keras' quantize, limited to what keeps a BERT model's outputs right."""

import keras

# Measured on a fine-tuned classifier (benchmarks/quantization.py): each
# keeps the predictions of the float model; the other modes of
# keras.Model.quantize (GPTQ and AWQ need calibration data and a layer
# structure; int4 loses too much) are refused rather than run.
QUANTIZATION_MODES = ("int8", "float8")


def _is_dense(layer):
  return isinstance(layer, keras.layers.Dense)


class QuantizableModel(keras.Model):
  """A keras.Model whose quantize() covers its Dense layers (the attention
  projections, the feed-forward layers, the pooler and the heads' transform)
  and refuses modes that would give wrong numbers.

  Word embeddings stay float: the masked-LM head multiplies by the same
  table. So do the classification heads, whose weights keep the original's
  [num_classes, width] layout.
  """

  def quantize(self, mode=None, config=None, filters=None, **kwargs):
    if mode not in QUANTIZATION_MODES:
      raise ValueError(
          f"{type(self).__name__}.quantize({mode!r}): bert_tf models "
          f"support {', '.join(map(repr, QUANTIZATION_MODES))}")
    super().quantize(mode, config=config, filters=filters or _is_dense,
                     **kwargs)
