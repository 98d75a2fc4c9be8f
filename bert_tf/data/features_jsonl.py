"""extract_features' JSONL, as the original writes it.

The original writes, per input line, json.dumps of
{"linex_index": n, "features": [{"token": t, "layers": [{"index": i,
"values": [round(float(x), 6), ...]}, ...]}, ...]}, rounding one value at a
time in Python. Here whole arrays are rounded at once, to the same doubles:
x * 1e6 is exact in float64 for a float32 x (24 + 14 significant bits), so
np.rint of it is round()'s correctly rounded, half-to-even choice, and
dividing the integer by 1e6 gives the double nearest that decimal, which
is what round() returns; json then prints each as repr does.
"""

import json

import numpy as np

_SCALE = 1e6


def rounded_values(values):
  """round(float(x), 6) of every float32 value: float64, values' shape."""
  return np.rint(np.asarray(values, np.float32).astype(np.float64)
                 * _SCALE) / _SCALE


def jsonl_line(linex_index, tokens, layer_indexes, layer_values):
  """One line of the original's output file, with its newline.

  Args:
    linex_index: the input line's number.
    tokens: the sequence's tokens, [CLS] and [SEP] included.
    layer_indexes: the --layers values, in flag order.
    layer_values: float32 [len(layer_indexes), len(tokens), hidden].
  """
  values = rounded_values(layer_values).tolist()
  return json.dumps({"linex_index": linex_index, "features": [
      {"token": token, "layers": [
          {"index": index, "values": values[layer][position]}
          for layer, index in enumerate(layer_indexes)]}
      for position, token in enumerate(tokens)]}) + "\n"
