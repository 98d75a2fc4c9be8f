"""extract_features on a sentence-transformers SparseEncoder folder
(extraction.sparse): each line's non-zero weights as sentence-transformers'
encode gives them (tests/fixtures/sparse_encoder, make_fixtures.py), in
JSONL and as a CSR npz, and the export's top-k token ids and weights."""

import json
import os
import shutil

import numpy as np
import pytest
import scipy.sparse
import tensorflow as tf

import bert_tf
from bert_tf import tokenization
from bert_tf.data.text_inputs import encode_texts
from bert_tf.extraction.extraction import ExtractionOptions, extract_features
from tests.support.helpers import (PROJECT_DIR, assert_fails_in_one_line,
                                   run_script_cases)

FOLDERS = os.path.join(PROJECT_DIR, "tests", "fixtures", "sparse_encoder")
# max_active_dims 6, default prompt "q: ".
TOP_SIX = os.path.join(FOLDERS, "max_active_dims")
# A Router: queries through SparseStaticEmbedding, documents through SPLADE.
ROUTER = os.path.join(FOLDERS, "router")
# Lines transformers tokenises otherwise than the original: a special
# token in the text is kept whole; a word of over 100 characters is [UNK].
AS_TRANSFORMERS = ["[CLS] a [MASK] lake", "a " + "w" * 150]
DENSE = os.path.join(PROJECT_DIR, "tests", "fixtures",
                     "sentence_transformers", "today_mean")
SCRIPT = "extract_features.py"
# The refusals, each (flags over a TOP_SIX run to refused.npz, message).
REFUSED = [
    ({"pooling": "mean"}, r"--pooling=mean: applies to dense embeddings; "
                          r"--init_checkpoint=.*max_active_dims is a "
                          r"SparseEncoder, one weight per vocabulary token$"),
    ({"precision": "int8"}, r"--precision=int8: applies to dense "
                            r"embeddings; --init_checkpoint=.*max_active_dims"),
    ({"truncate_dim": 8}, r"--truncate_dim=8: applies to dense embeddings"),
    ({"top_k": 0, "export_dir": "export"}, r"--top_k=0: must be at least 1$"),
    ({"max_active_dims": -1}, r"--max_active_dims=-1: must be at least 1$"),
    ({"top_k": 5}, r"--top_k=5: sets the k of the --export_dir export's "
                   r"top-k weights; give --export_dir$"),
    ({"init_checkpoint": DENSE, "max_active_dims": 2},
     r"--max_active_dims=2: applies to a sentence-transformers "
     r"SparseEncoder folder as --init_checkpoint$"),
]


def expected(folder):
  return np.load(os.path.join(folder, "expected.npz"))


def tokenizer(folder):
  """The tokenizer of the folder's BERT (a Router's document route)."""
  if folder == ROUTER:
    folder = os.path.join(folder, "document_0_Transformer")
  return tokenization.FullTokenizer(os.path.join(folder, "tokenizer.json"),
                                    True)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
  """The script, in one process: TOP_SIX to a JSONL with
  --max_active_dims=3 and an export, and per-token with --layers; the
  Router to an npz with an export of --top_k past the vocabulary; the
  refusals."""
  tmp_path = tmp_path_factory.mktemp("sparse")
  texts = tmp_path / "texts.txt"
  texts.write_text("".join(f"{text}\n" for text in [
      *expected(TOP_SIX)["texts"], *AS_TRANSFORMERS]), encoding="utf-8")
  run = {"input_file": texts, "batch_size": 4}
  cases = [
      {**run, "init_checkpoint": TOP_SIX, "max_active_dims": 3,
       "output_file": tmp_path / "top_three.jsonl",
       "export_dir": tmp_path / "top_three_export"},
      {**run, "init_checkpoint": TOP_SIX, "layers": -1, "max_seq_length": 20,
       "output_format": "npz", "output_file": tmp_path / "layers.npz"},
      {**run, "init_checkpoint": ROUTER, "top_k": 1000, "output_format": "npz",
       "output_file": tmp_path / "router.npz",
       "export_dir": tmp_path / "router_export"}]
  cases += [{**run, "init_checkpoint": TOP_SIX, "output_format": "npz",
             "output_file": tmp_path / "refused.npz", **flags}
            for flags, _ in REFUSED]
  outcomes = run_script_cases(SCRIPT, cases)
  assert [code for code, _ in outcomes[:3]] == [0] * 3, outcomes[:3]
  return tmp_path, outcomes[3:]


def jsonl_weights(path):
  with open(path, encoding="utf-8") as reader:
    lines = [json.loads(line) for line in reader]
  assert [line["linex_index"] for line in lines] == list(range(len(lines)))
  return [line["embedding"] for line in lines]


def assert_decoded(lines, embeddings, vocabulary):
  """Each line's {token: weight} is its embedding's non-zero weights,
  largest first, rounded to 6 decimals."""
  assert len(lines) == len(embeddings)
  for line, embedding in zip(lines, embeddings):
    ids = np.flatnonzero(embedding)
    ids = ids[np.argsort(-embedding[ids], kind="stable")]
    assert list(line) == vocabulary.convert_ids_to_tokens(ids.tolist())
    np.testing.assert_allclose(list(line.values()), embedding[ids],
                               atol=1e-5)


def test_npz_is_the_csr_matrix_of_encode(runs):
  """A Router's lines are encode_document's (its document route)."""
  tmp_path, _ = runs
  arrays = np.load(tmp_path / "router.npz")
  assert {name: arrays[name].dtype for name in arrays} == {
      "values": np.float32, "indices": np.int32, "indptr": np.int64,
      "shape": np.int64}
  matrix = scipy.sparse.csr_matrix(
      (arrays["values"], arrays["indices"], arrays["indptr"]),
      tuple(arrays["shape"]))
  assert matrix.has_sorted_indices
  want = expected(ROUTER)["embeddings_document"]
  assert matrix.shape == (len(want) + len(AS_TRANSFORMERS), 144)
  matrix = matrix[:len(want)]
  assert matrix.nnz == (want != 0).sum()
  np.testing.assert_allclose(matrix.toarray(), want, atol=1e-5)


@pytest.fixture(scope="module")
def top_three():
  """encode's weights of the fixture's texts then AS_TRANSFORMERS, its
  default prompt, max_active_dims=3."""
  encoded = bert_tf.load_pretrained(TOP_SIX).model.encode(
      AS_TRANSFORMERS, max_active_dims=3)
  return np.concatenate([expected(TOP_SIX)["embeddings_top3"],
                         tf.sparse.to_dense(encoded).numpy()])


def test_jsonl_is_token_weight_pairs_largest_first(runs, top_three):
  """The folder's default prompt, --max_active_dims=3 over its 6; lines
  tokenised as encode tokenises them."""
  tmp_path, _ = runs
  assert_decoded(jsonl_weights(tmp_path / "top_three.jsonl"), top_three,
                 tokenizer(TOP_SIX))


def test_layers_alone_give_the_per_token_output(runs):
  tmp_path, _ = runs
  assert np.load(tmp_path / "layers.npz")["values"].shape[1:] == (1, 32)


def top_k(embeddings, k):
  ids = np.argsort(-embeddings, axis=1, kind="stable")[:, :k]
  return ids, np.take_along_axis(embeddings, ids, axis=1)


def assert_top_k(served, embeddings, k):
  """Weights within 1e-5, ids exactly where the weights are distinct."""
  ids, weights = top_k(embeddings, k)
  got_ids, got_weights = (np.array(served[name])
                          for name in ("token_ids", "weights"))
  np.testing.assert_allclose(got_weights, weights, atol=1e-5)
  gaps = np.diff(weights, axis=1, prepend=np.inf, append=-np.inf)
  distinct = (np.abs(gaps[:, :-1]) > 1e-4) & (np.abs(gaps[:, 1:]) > 1e-4)
  np.testing.assert_array_equal(got_ids[distinct], ids[distinct])


def served(export_dir, signature, **inputs):
  """The export's answer, loaded as TensorFlow loads a SavedModel."""
  return tf.saved_model.load(str(export_dir / "1")).signatures[signature](
      **{name: tf.constant(value) for name, value in inputs.items()})


def test_the_export_serves_the_top_k_of_encode(runs, top_three):
  """k: --max_active_dims (3); serve_text applies the folder's default
  prompt and tokenises as encode; serving_default takes the ids as given
  (here with the prompt)."""
  tmp_path, _ = runs
  texts = expected(TOP_SIX)["texts"]
  ids = encode_texts(tokenizer(TOP_SIX), ["q: " + text for text in texts],
                     max_seq_length=20)  # its tokenizer's
  export_dir = tmp_path / "top_three_export"
  answer = served(export_dir, "serve_text",
                  text=[*texts, *AS_TRANSFORMERS])
  assert_top_k(answer, top_three, 3)
  answer = served(export_dir, "serving_default", **ids)
  assert sorted(answer) == ["token_ids", "weights"]
  assert answer["token_ids"].dtype == tf.int32
  assert_top_k(answer, top_three[:len(texts)], 3)


def test_a_top_k_past_the_vocabulary_serves_all_of_it(runs):
  """A Router's document route, every token: zero weights last."""
  tmp_path, _ = runs
  arrays = expected(ROUTER)
  answer = served(tmp_path / "router_export", "serve_text",
                  text=arrays["texts"])
  assert answer["token_ids"].shape == (10, 144)
  assert_top_k(answer, arrays["embeddings_document"], 144)


@pytest.mark.parametrize("index", range(len(REFUSED)))
def test_flags_that_do_not_apply_are_refused_in_one_line(runs, index):
  tmp_path, outcomes = runs
  assert_fails_in_one_line(outcomes[index], SCRIPT, REFUSED[index][1])
  assert not (tmp_path / "refused.npz").exists()
  assert not (tmp_path / "export").exists()


def test_a_jsonl_of_a_vocabulary_that_repeats_a_token_is_refused(tmp_path):
  """Its {token: weight} could not tell the two ids apart; the npz can."""
  folder = shutil.copytree(os.path.join(FOLDERS, "classic"),
                           tmp_path / "folder")
  vocab = (folder / "vocab.txt").read_text().split("\n")
  vocab[100] = vocab[101]
  (folder / "vocab.txt").write_text("\n".join(vocab))
  (tmp_path / "texts.txt").write_text("a lake\n")
  with pytest.raises(ValueError, match=r"^--output_format=jsonl: .*vocab.txt "
                                       r"repeats a token \(id 100 is "
                                       r"shadowed\)"):
    extract_features(ExtractionOptions(
        input_file=str(tmp_path / "texts.txt"), init_checkpoint=str(folder),
        output_file=str(tmp_path / "out.jsonl")),
                     tf.distribute.get_strategy())
  assert not (tmp_path / "out.jsonl").exists()
