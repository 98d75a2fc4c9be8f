"""Embeddings in fewer bits, as sentence-transformers' quantize_embeddings
gives them (the same dtypes and values): a float32 copy, int8 or uint8
buckets of each dimension's range, or one bit per dimension (binary,
ubinary). numpy only: no TensorFlow is imported.

int8 and uint8 cut each dimension's [min, max] into 255 equal steps: the
ranges given, else those of calibration embeddings, else those of the
embeddings themselves (which then must be more than one). A dimension of
zero range takes steps of 1. binary and ubinary set a bit where a value is
over 0, the first dimension in each byte's highest bit; binary stores each
byte minus 128 as int8.
"""

import numpy as np

PRECISIONS = ("float32", "int8", "uint8", "binary", "ubinary")
# The dtype of each precision's values.
DTYPES = {"float32": np.float32, "int8": np.int8, "uint8": np.uint8,
          "binary": np.int8, "ubinary": np.uint8}
# int8 and uint8 buckets per dimension: 0..255.
_STEPS = 255
_NAME = "quantize_embeddings"


def quantize_embeddings(embeddings, precision, ranges=None,
                        calibration_embeddings=None):
  """Embeddings [n, dim] (or one [dim]) in `precision`, as
  sentence_transformers.quantization.quantize_embeddings.

  Args:
    embeddings: numbers [n, dim] or [dim]: a numpy array, a list, a
      tensor; float16, float32 or float64 are computed in their own
      precision, as sentence-transformers does.
    precision: one of PRECISIONS.
    ranges: int8 and uint8: [2, dim], each dimension's min and max.
    calibration_embeddings: int8 and uint8, without ranges: [m, dim]
      whose min and max of each dimension are the ranges.

  Returns:
    numpy, DTYPES[precision]: [n, dim] (float32, int8, uint8) or [n,
    ceil(dim / 8)] (binary, ubinary); [dim] or [ceil(dim / 8)] for one
    embedding. No embeddings ([] or [0, dim]) give none.

  Raises:
    ValueError: in one line naming the argument: a precision not in
      PRECISIONS; embeddings that are not numbers [n, dim] or [dim]
      (already int8 or uint8 included); for int8 and uint8, ranges not
      [2, dim] of finite min <= max, calibration embeddings not finite
      [m, dim], both given, neither given for one embedding, or values
      that are NaN (their bucket is undefined).
  """
  if not isinstance(precision, str) or precision not in PRECISIONS:
    raise ValueError(f"{_NAME}: precision={precision!r}; expected one of "
                     f"{', '.join(PRECISIONS)}")
  values = _numbers(embeddings, "embeddings", (1, 2))
  if values.dtype in (np.int8, np.uint8):
    raise ValueError(f"{_NAME}: embeddings are {values.dtype} already; "
                     "expected the float embeddings to quantize")
  if precision == "float32":
    return values.astype(np.float32)
  if precision.endswith("binary"):
    packed = np.packbits(values > 0, axis=-1)
    return packed if precision == "ubinary" else \
        (packed - 128).astype(np.int8)
  if not len(values):
    return np.zeros(values.shape, DTYPES[precision])
  ranges = _checked_ranges(values, ranges, calibration_embeddings)
  if np.isnan(values).any():
    raise ValueError(f"{_NAME}: embeddings hold NaN, which has no "
                     f"{precision} bucket")
  if ranges is None:
    ranges = _ranges_of(values, "embeddings")
  starts = ranges[0, :]
  steps = (ranges[1, :] - starts) / _STEPS
  steps = np.where(steps == 0, 1, steps)
  buckets = np.clip(np.floor((values - starts) / steps), 0, _STEPS)
  if precision == "uint8":
    return buckets.astype(np.uint8)
  return (buckets - 128).astype(np.int8)


def _checked_ranges(values, ranges, calibration_embeddings):
  """float32 [2, dim] ranges of the arguments given (None where neither
  is, and there is more than one embedding to take them from)."""
  dimension = values.shape[-1]
  if ranges is not None and calibration_embeddings is not None:
    raise ValueError(f"{_NAME}: ranges and calibration_embeddings both "
                     "given; give one (ranges win in sentence-transformers)")
  if ranges is not None:
    ranges = _numbers(ranges, "ranges", (2,)).astype(np.float32)
    if ranges.shape != (2, dimension):
      raise ValueError(f"{_NAME}: ranges has shape {ranges.shape}; "
                       f"expected (2, {dimension}): each dimension's min "
                       "and max")
    if not np.isfinite(ranges).all() or (ranges[0] > ranges[1]).any():
      raise ValueError(f"{_NAME}: ranges must be finite, each min (row 0) "
                       "at most its max (row 1)")
    return ranges
  if calibration_embeddings is not None:
    calibration = _numbers(calibration_embeddings, "calibration_embeddings",
                           (2,))
    if not len(calibration) or calibration.shape[1] != dimension:
      raise ValueError(f"{_NAME}: calibration_embeddings has shape "
                       f"{calibration.shape}; expected (m, {dimension}), "
                       "m >= 1")
    return _ranges_of(calibration, "calibration_embeddings")
  if values.ndim == 1 or len(values) == 1:
    raise ValueError(f"{_NAME}: int8 and uint8 ranges cannot come from one "
                     "embedding; give ranges= or calibration_embeddings=")
  return None


def _ranges_of(embeddings, argument):
  """float32 [2, dim]: each dimension's min and max, in the embeddings'
  own dtype, as sentence-transformers takes them."""
  if not np.isfinite(embeddings).all():
    raise ValueError(f"{_NAME}: {argument} hold NaN or infinity; int8 "
                     "ranges need finite values")
  return np.vstack((np.min(embeddings, axis=0),
                    np.max(embeddings, axis=0))).astype(np.float32)


def _numbers(values, argument, ranks):
  """values as a numpy array of integers or floats of one of `ranks`."""
  try:
    array = np.asarray(values)
  except (ValueError, TypeError) as error:  # ragged lists
    raise ValueError(f"{_NAME}: {argument} is not an array of numbers "
                     f"({str(error).splitlines()[0]})") from None
  if array.dtype.kind not in "iuf" or array.ndim not in ranks:
    shapes = " or ".join(("[dim]", "[n, dim]")[rank - 1] for rank in ranks)
    raise ValueError(f"{_NAME}: {argument} has shape {array.shape} and "
                     f"dtype {array.dtype}; expected numbers {shapes}")
  return array
