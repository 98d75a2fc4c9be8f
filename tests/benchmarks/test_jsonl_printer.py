"""benchmarks/jsonl_printer.py's plain route writes jsonl_line's bytes
(what its timings compare), on the values the printer handles in tables
and those it sends through json."""

import os

import numpy as np
import pytest

from bert_tf.extraction.jsonl import jsonl_line
from tests.support.helpers import PROJECT_DIR


@pytest.fixture(name="jsonl_printer")
def benchmark_module(monkeypatch):
  monkeypatch.syspath_prepend(os.path.join(PROJECT_DIR, "benchmarks"))
  import jsonl_printer  # pylint: disable=import-outside-toplevel
  return jsonl_printer


@pytest.mark.parametrize("extra", [0.0, -0.0, 5e-7, 1e-45, 999.9995, 1e30])
def test_the_plain_route_prints_the_same_bytes(jsonl_printer, extra):
  values = np.random.default_rng(0).standard_normal((2, 3, 5)).astype(
      np.float32)
  values[1, 2, 4] = extra
  tokens = ["[CLS]", "caf\u00e9", "[SEP]"]
  assert jsonl_printer.plain_line(4, tokens, [-1, 0], values) == \
      jsonl_line(4, tokens, [-1, 0], values)
