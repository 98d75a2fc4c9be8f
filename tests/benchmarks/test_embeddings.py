"""benchmarks/embeddings.py's bert_tf side, in this process on a tiny
folder: its worker answers each command with one JSON line and encodes what
sentence-transformers does (timings are never asserted); without the peer
installed it says why; routes are named and embeddings compared as the
report says."""

import io
import json
import os
import sys

import numpy as np
import pytest

from tests.support.helpers import PROJECT_DIR

FOLDER = os.path.join(PROJECT_DIR, "tests", "fixtures",
                      "sentence_transformers", "today_mean")


@pytest.fixture(name="embeddings")
def benchmark_module(monkeypatch):
  monkeypatch.syspath_prepend(os.path.join(PROJECT_DIR, "benchmarks"))
  import embeddings  # pylint: disable=import-outside-toplevel
  return embeddings


def test_the_worker_times_and_saves_sentence_transformers_embeddings(
    embeddings, tmp_path):
  expected = np.load(os.path.join(FOLDER, "expected.npz"))
  side = embeddings.BertTfSide(FOLDER, "float32", 0)
  saved = tmp_path / "embeddings.npy"
  replies = io.StringIO()
  embeddings.serve(side, [str(text) for text in expected["texts"]], 16,
                   ["encode\n", "tokenise\n", f"save {saved}\n"], replies)
  encode, tokenise, save = map(json.loads, replies.getvalue().splitlines())
  assert encode["seconds"] > 0 and tokenise["seconds"] > 0 and save == {}
  assert 1 < tokenise["mean_pieces"] <= 20
  # 10 texts in batches of 16: one batch, at its longest text (20 pieces).
  assert tokenise["positions"] == 10 * 20
  np.testing.assert_allclose(np.load(saved), expected["embeddings"],
                             atol=1e-5)
  assert "TensorFlow" in side.settings()


def test_an_interpreter_without_the_peer_is_named_with_the_reason(
    embeddings):
  assert "sentence_transformers" in embeddings.peer_missing(sys.executable,
                                                           "openvino")


def test_routes_are_named_out_of_each_library_s_options(embeddings):
  args = embeddings.parse_args(["--bert_tf_dtypes=bfloat16,float32,bfloat16",
                                "--peer_backends="])
  assert args.bert_tf_dtypes == ["bfloat16", "float32"]
  assert not args.peer_backends
  with pytest.raises(SystemExit):
    embeddings.parse_args(["--peer_backends=onnx,tensorrt"])


def test_embeddings_are_compared_by_lowest_cosine_and_largest_difference(
    embeddings):
  reference = np.array([[1.0, 0.0], [0.6, 0.8]], np.float32)
  lowest, largest = embeddings.compared(reference * [[2.0], [1.0]],
                                        reference)
  assert lowest == pytest.approx(1.0) and largest == pytest.approx(1.0)
  lowest, _ = embeddings.compared(reference[::-1], reference)
  assert lowest == pytest.approx(0.6)
