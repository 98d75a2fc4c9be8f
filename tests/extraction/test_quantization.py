"""quantize_embeddings against sentence-transformers' own outputs for the
same embeddings (tests/fixtures/embeddings_quantization, written by
make_quantization.py there): the same dtypes and values, exactly."""

import os
import subprocess
import sys

import numpy as np
import pytest

import bert_tf
from bert_tf.extraction.quantization import PRECISIONS, quantize_embeddings
from tests.support.helpers import PROJECT_DIR

EXPECTED = dict(np.load(os.path.join(
    PROJECT_DIR, "tests", "fixtures", "embeddings_quantization",
    "expected.npz")))
EMBEDDINGS = EXPECTED["embeddings"]


def assert_same(ours, theirs):
  assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
  np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("precision", PRECISIONS)
def test_each_precision_as_sentence_transformers(precision):
  """int8 and uint8 calibrated on the embeddings themselves (a constant
  dimension takes steps of 1); binary packs 20 dimensions in 3 bytes."""
  assert_same(quantize_embeddings(EMBEDDINGS, precision), EXPECTED[precision])


@pytest.mark.parametrize("precision", ["int8", "uint8"])
@pytest.mark.parametrize("calibration", ["ranges", "calibration"])
def test_int8_calibrated_by_ranges_or_embeddings(precision, calibration):
  argument = {"ranges": "ranges",
              "calibration": "calibration_embeddings"}[calibration]
  assert_same(quantize_embeddings(EMBEDDINGS, precision,
                                  **{argument: EXPECTED[calibration]}),
              EXPECTED[f"{precision}_{calibration}"])


def test_float64_lists_and_one_embedding_as_sentence_transformers():
  """float64 computes in float64; a list is an array; one embedding [dim]
  gives [dim] (or its bytes)."""
  assert_same(quantize_embeddings(EXPECTED["embeddings_float64"], "int8"),
              EXPECTED["int8_float64"])
  assert_same(quantize_embeddings(EXPECTED["embeddings_float64"].tolist(),
                                  "int8"), EXPECTED["int8_float64"])
  for precision in ("binary", "ubinary"):
    assert_same(quantize_embeddings(EMBEDDINGS[0], precision),
                EXPECTED[f"{precision}_row"])
  assert_same(quantize_embeddings(list(EMBEDDINGS[0]), "int8",
                                  ranges=EXPECTED["ranges"].tolist()),
              EXPECTED["int8_row_ranges"])


@pytest.mark.parametrize("precision, shape", [
    ("float32", (0, 20)), ("int8", (0, 20)), ("uint8", (0, 20)),
    ("binary", (0, 3)), ("ubinary", (0, 3))])
def test_no_embeddings_give_none(precision, shape):
  nothing = quantize_embeddings(np.zeros((0, 20), np.float32), precision)
  assert nothing.shape == shape and nothing.dtype == EXPECTED[precision].dtype
  assert quantize_embeddings([], precision).shape == (0,)


@pytest.mark.parametrize("arguments, message", [
    ({"precision": "int4"}, "precision='int4'; expected one of float32, "
                            "int8, uint8, binary, ubinary"),
    ({"precision": None}, "precision=None; expected one of"),
    ({"embeddings": EMBEDDINGS.astype(np.int8)},
     "embeddings are int8 already; expected the float embeddings"),
    ({"embeddings": [[1.0, 2.0], [3.0]]}, "embeddings is not an array of "
                                          "numbers"),
    ({"embeddings": np.zeros((2, 3, 4))}, r"embeddings has shape \(2, 3, 4\) "
                                          r"and dtype float64; expected "
                                          r"numbers \[dim\] or \[n, dim\]"),
    ({"embeddings": np.array(["a", "b"])}, "embeddings has shape"),
    ({"embeddings": np.array(1.5)}, "embeddings has shape"),
    ({"embeddings": EMBEDDINGS[:1]}, "int8 and uint8 ranges cannot come from "
                                     "one embedding"),
    ({"embeddings": EMBEDDINGS[0]}, "int8 and uint8 ranges cannot come"),
    ({"embeddings": np.where(EMBEDDINGS > 2, np.nan, EMBEDDINGS)},
     "embeddings hold NaN, which has no int8 bucket"),
    ({"embeddings": np.where(EMBEDDINGS > 2, np.inf, EMBEDDINGS)},
     "embeddings hold NaN or infinity; int8 ranges need finite values"),
    ({"ranges": EXPECTED["ranges"][:, :19]}, r"ranges has shape \(2, 19\); "
                                             r"expected \(2, 20\)"),
    ({"ranges": EXPECTED["ranges"][0]}, r"ranges has shape \(20,\)"),
    ({"ranges": EXPECTED["ranges"][::-1]}, "ranges must be finite, each min "
                                           r"\(row 0\) at most its max"),
    ({"ranges": EXPECTED["ranges"] * np.inf}, "ranges must be finite"),
    ({"calibration_embeddings": EXPECTED["calibration"][:, :8]},
     r"calibration_embeddings has shape \(60, 8\); expected \(m, 20\)"),
    ({"calibration_embeddings": np.zeros((0, 20))},
     r"calibration_embeddings has shape \(0, 20\)"),
    ({"calibration_embeddings": EXPECTED["calibration"][0]},
     "calibration_embeddings has shape"),
    ({"ranges": EXPECTED["ranges"],
      "calibration_embeddings": EXPECTED["calibration"]},
     "ranges and calibration_embeddings both given"),
])
def test_what_quantize_embeddings_refuses(arguments, message):
  """In one line naming the argument, before any work."""
  arguments = {"embeddings": EMBEDDINGS, "precision": "int8", **arguments}
  with pytest.raises(ValueError, match="^quantize_embeddings: " + message) \
      as error:
    quantize_embeddings(**arguments)
  assert "\n" not in str(error.value)


def test_binary_takes_nan_as_not_over_zero():
  """As sentence-transformers: NaN > 0 is false."""
  values = np.where(EMBEDDINGS > 2, np.nan, EMBEDDINGS)
  assert_same(quantize_embeddings(values, "ubinary"),
              np.packbits(np.nan_to_num(values, nan=0) > 0, axis=-1))


def test_bert_tf_exports_it_without_importing_tensorflow():
  assert bert_tf.quantize_embeddings is quantize_embeddings
  subprocess.run([sys.executable, "-c", (
      "import sys, bert_tf; bert_tf.quantize_embeddings([[1.0], [2.0]], "
      "'int8'); assert 'tensorflow' not in sys.modules")], check=True,
                 cwd=PROJECT_DIR)
