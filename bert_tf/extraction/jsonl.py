"""extract_features' JSONL, as the original writes it, byte for byte.

The original writes, per input line, json.dumps of
{"linex_index": n, "features": [{"token": t, "layers": [{"index": i,
"values": [round(float(x), 6), ...]}, ...]}, ...]}, rounding one value at a
time in Python. Here whole arrays are rounded at once, to the same doubles:
x * 1e6 is exact in float64 for a float32 x (24 + 14 significant bits), so
np.rint of it is round()'s correctly rounded, half-to-even choice, and
dividing the integer by 1e6 gives the double nearest that decimal, which
is what round() returns.

json prints each such double as repr does: the shortest text that reads
back to it. For the integer n = rint(x * 1e6) that text is n's decimal
digits with the point six places from the right and trailing zeros
dropped ("-0.25", "3.0", "-0.0"), except below 1e-4, where repr switches to
exponents ("5e-06", "-1.2e-05"). Printing a float is what costs the most
(every layer of every token of every line), so the digits are assembled
for a whole line at once in numpy from digit tables (about 10x the
original's loop, byte for byte the same), and only the frame around them
is formatted in Python. Values this cannot print (1000 or more,
infinities, NaN) send their line through json itself.
"""

import dataclasses
import functools
import json

import numpy as np

_SCALE = 10 ** 6
# Below this many millionths repr writes an exponent.
_EXPONENT_BELOW = 100
_THOUSAND = 1000
# One printed value is 16 bytes (two uint64 words) from which NUL bytes are
# then deleted: sign, three integer digits, the point, the fraction's first
# (high) and last (low) three digits, three NULs, the separator ", " (a
# newline ends a list instead). Words come from 1000-entry tables (in
# cache) and are or-ed together: byte-wise work on every value would cost
# more than json's own printing.
_WIDTH, _SEPARATOR = 16, 14
_LIST_END = b"\n\0"


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
  # Token-major, as the file lists them: [tokens, layers, hidden].
  values = np.asarray(layer_values, np.float32).transpose(1, 0, 2)
  printed = _printed_lists(values.reshape(-1, values.shape[-1]))
  if printed is None:
    return _json_line(linex_index, tokens, layer_indexes, values)
  layer_count = len(layer_indexes)
  features = []
  for position, token in enumerate(tokens):
    lists = printed[position * layer_count:(position + 1) * layer_count]
    features.append(
        '{"token": %s, "layers": [%s]}' % (json.dumps(token), ", ".join(
            '{"index": %d, "values": [%s]}' % (index, values_text)
            for index, values_text in zip(layer_indexes, lists))))
  return '{"linex_index": %d, "features": [%s]}\n' % (
      linex_index, ", ".join(features))


def embedding_line(linex_index, embedding):
  """One line of extract_features' embeddings JSONL, with its newline:
  {"linex_index": n, "embedding": [values]}, float values as float32
  rounded and printed as jsonl_line prints a layer's, integers (quantized
  embeddings) as they are."""
  if np.asarray(embedding).dtype.kind in "iu":
    return json.dumps({"linex_index": linex_index,
                       "embedding": np.asarray(embedding).tolist()}) + "\n"
  row = np.asarray(embedding, np.float32)[None]
  printed = _printed_lists(row)
  if printed is None:
    return json.dumps({"linex_index": linex_index,
                       "embedding": rounded_values(row[0]).tolist()}) + "\n"
  return '{"linex_index": %d, "embedding": [%s]}\n' % (linex_index,
                                                       printed[0])


def sparse_line(linex_index, tokens, weights):
  """One line of extract_features' sparse embeddings JSONL, with its
  newline: {"linex_index": n, "embedding": {token: weight, ...}} in the
  order given, weights float32 rounded as jsonl_line rounds a layer's."""
  return json.dumps({"linex_index": linex_index, "embedding": dict(zip(
      tokens, rounded_values(weights).tolist()))}) + "\n"


def _json_line(linex_index, tokens, layer_indexes, values):
  """jsonl_line through json: for values _printed_lists cannot print."""
  rounded = rounded_values(values).tolist()
  return json.dumps({"linex_index": linex_index, "features": [
      {"token": token, "layers": [
          {"index": index, "values": rounded[position][layer]}
          for layer, index in enumerate(layer_indexes)]}
      for position, token in enumerate(tokens)]}) + "\n"


def _printed_lists(rows):
  """Each row of float32 values [lists, hidden] as json prints its rounded
  values joined by ", "; None if one of them is outside what the tables
  print."""
  values = rows.astype(np.float64).ravel()
  scaled = np.rint(np.abs(values) * _SCALE)
  if not np.all(scaled < _THOUSAND * _SCALE):
    return None  # also False for NaN
  # Exact in float64: integers below 2**53 and their floored quotients.
  integer_part = np.floor(scaled / _SCALE)
  fraction = scaled - integer_part * _SCALE
  high = np.floor(fraction / _THOUSAND)
  low = (fraction - high * _THOUSAND).astype(np.intp)
  tables = _tables()
  words = np.empty((len(values), 2), np.uint64)
  # The fraction's first three digits lose trailing zeros only when its
  # last three are all zeros. -0.0 prints as "-0.0".
  words[:, 0] = (tables.sign[np.signbit(values).view(np.uint8)]
                 | tables.integer[integer_part.astype(np.intp)]
                 | tables.high[high.astype(np.intp)
                               + _THOUSAND * (low != 0)])
  words[:, 1] = tables.low[low]
  tiny = np.flatnonzero((scaled > 0) & (scaled < _EXPONENT_BELOW))
  if len(tiny):
    words[tiny] = tables.exponent[np.copysign(
        scaled[tiny], values[tiny]).astype(np.intp) + _EXPONENT_BELOW]
  text = words.view(np.uint8).reshape(len(values), _WIDTH)
  text[rows.shape[-1] - 1::rows.shape[-1], _SEPARATOR:] = np.frombuffer(
      _LIST_END, np.uint8)
  return text.tobytes().translate(None, b"\0").decode("ascii").split(
      "\n")[:-1]


@dataclasses.dataclass(frozen=True)
class _Tables:
  """Printed pieces as uint64 words, NUL where nothing is printed:

  sign: word 0 for a positive or negative value; integer: word 0 for an
  integer part; high: word 0 for the point and the fraction's first three
  digits, all of them (index + 1000) or trailing zeros dropped; low: word 1
  for its last three digits, trailing zeros dropped, and the separator;
  exponent: both words of the values repr writes with an exponent, indexed
  by signed millionths + 100.
  """
  sign: np.ndarray
  integer: np.ndarray
  high: np.ndarray
  low: np.ndarray
  exponent: np.ndarray


def _rows(count):
  return np.zeros((count, _WIDTH), np.uint8)


def _words(rows, word):
  """Row bytes [n, 16] as one of their two uint64 words [n]."""
  return np.ascontiguousarray(rows).view(np.uint64)[:, word].copy()


def _three_digits(rows, first_column, keep):
  """Writes 0..999 (one per row) in three columns where `keep` [1000, 3]
  says, NUL elsewhere."""
  digits = np.arange(_THOUSAND)[:, None] // np.array([100, 10, 1]) % 10
  rows[:, first_column:first_column + 3] = np.where(
      keep(digits), ord("0") + digits, 0)


def _after_leading_zeros(digits):
  """True from the first non-zero digit, and for the units."""
  keep = np.cumsum(digits, axis=1) > 0
  keep[:, -1] = True
  return keep


def _before_trailing_zeros(digits):
  """True up to the last non-zero digit."""
  return np.cumsum(digits[:, ::-1], axis=1)[:, ::-1] > 0


@functools.cache
def _tables():
  sign = _rows(2)
  sign[1, 0] = ord("-")
  integer = _rows(_THOUSAND)
  _three_digits(integer, 1, _after_leading_zeros)
  all_digits, trimmed = _rows(_THOUSAND), _rows(_THOUSAND)
  _three_digits(all_digits, 5, np.ones_like)
  _three_digits(trimmed, 5, _before_trailing_zeros)
  trimmed[0, 5] = ord("0")  # "3.0"
  high = np.concatenate([trimmed, all_digits])
  high[:, 4] = ord(".")
  low = _rows(_THOUSAND)
  _three_digits(low, 8, _before_trailing_zeros)
  exponent = _rows(2 * _EXPONENT_BELOW)
  for n in range(-_EXPONENT_BELOW + 1, _EXPONENT_BELOW):
    printed = repr(n / _SCALE).encode("ascii")
    exponent[n + _EXPONENT_BELOW, :len(printed)] = np.frombuffer(printed,
                                                                 np.uint8)
  for rows in (low, exponent):
    rows[:, _SEPARATOR:] = np.frombuffer(b", ", np.uint8)
  return _Tables(sign=_words(sign, 0), integer=_words(integer, 0),
                 high=_words(high, 0), low=_words(low, 1),
                 exponent=np.ascontiguousarray(exponent).view(np.uint64))
