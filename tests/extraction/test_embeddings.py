"""extract_features' sentence embeddings (features.embeddings) against
sentence-transformers' own outputs (tests/fixtures/sentence_transformers,
make_fixtures.py) and numpy pooling of the encoder's last layer.

The fixtures' texts are written one per line. read_lines strips each line,
so " " is read as "": the same tokens, as sentence-transformers' tokenizer
drops whitespace too (after the prompt as well), and "" is a line of its
own, as every blank line is."""

import json
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf
from safetensors.numpy import save_file

import bert_tf
from bert_tf import tokenization
from bert_tf.data.text_inputs import encode_texts
from bert_tf.extraction.embeddings import embedding_serving
from bert_tf.extraction.extraction import ExtractionOptions, extract_features
from bert_tf.text.tokenizer import InGraphTokenizer
from tests.support.helpers import (PROJECT_DIR, assert_fails_in_one_line,
                                   run_script_cases)
from tests.support.serving import serve_export

FOLDERS = os.path.join(PROJECT_DIR, "tests", "fixtures",
                       "sentence_transformers")
# A Hugging Face folder, no sentence-transformers files.
PLAIN_FOLDER = os.path.join(PROJECT_DIR, "tests", "fixtures", "huggingface",
                            "transformers5_classifier")
# Prompts and Normalize (max length 20); Dense with tanh (max length 16).
EMBEDDERS = ("today_mean", "classic_cls_dense")


def expected(name):
  return np.load(os.path.join(FOLDERS, name, "expected.npz"))


def texts_file(path, texts):
  path.write_text("".join(f"{text}\n" for text in texts), encoding="utf-8")
  return path


def read_embeddings(path, dtype=np.float32):
  if str(path).endswith(".npz"):
    arrays = np.load(path)
    assert list(arrays) == ["embeddings"]
    assert arrays["embeddings"].dtype == dtype
    return arrays["embeddings"]
  with open(path, encoding="utf-8") as reader:
    lines = [json.loads(line) for line in reader]
  assert [list(line) for line in lines] == [["linex_index", "embedding"]] * \
      len(lines)
  assert [line["linex_index"] for line in lines] == list(range(len(lines)))
  return np.array([line["embedding"] for line in lines], dtype)


def extracted(tmp_path, name="output.npz", **flags):
  """The embeddings extract_features writes, in this process."""
  options = {"input_file": str(texts_file(
      tmp_path / "texts.txt", expected("today_mean")["texts"])),
             "output_file": str(tmp_path / name), "batch_size": 4,
             "output_format": name.rpartition(".")[2], **flags}
  extract_features(ExtractionOptions(**options), tf.distribute.get_strategy())
  return read_embeddings(tmp_path / name)


@pytest.fixture(scope="module")
def script_runs(tmp_path_factory):
  """The script, in one process: each folder alone, to an npz (today_mean's
  with an export) and a JSONL; then two refusals."""
  tmp_path = tmp_path_factory.mktemp("embeddings")
  cases = []
  for name in EMBEDDERS:
    texts = texts_file(tmp_path / f"{name}.txt", expected(name)["texts"])
    for output in ("npz", "jsonl"):
      cases.append({"input_file": texts, "init_checkpoint": os.path.join(
          FOLDERS, name), "output_file": tmp_path / f"{name}.{output}",
                    "output_format": output, "batch_size": 4})
  cases[0]["export_dir"] = tmp_path / "export"
  refused = {"input_file": texts, "output_file": tmp_path / "refused.npz"}
  cases += [
      {**refused, "init_checkpoint": os.path.join(FOLDERS, "today_mean"),
       "layers": "-1", "pooling": "mean"},
      {**refused, "init_checkpoint": os.path.join(FOLDERS, "cross_encoder"),
       "pooling": "mean"}]
  texts = texts_file(tmp_path / "fixture_texts.txt",
                     expected("today_weightedmean")["texts"])
  quantized = {"input_file": texts, "batch_size": 4,
               "init_checkpoint": os.path.join(FOLDERS, "today_weightedmean")}
  cases += [
      {**quantized, "output_file": tmp_path / "int8.npz",
       "output_format": "npz", "pooling": "weightedmean", "truncate_dim": 8,
       "precision": "int8"},
      {**quantized, "output_file": tmp_path / "ubinary.jsonl",
       "precision": "ubinary"},
      {**quantized, "output_file": tmp_path / "include_prompt.npz",
       "output_format": "npz", "truncate_dim": 16,
       "init_checkpoint": os.path.join(FOLDERS, "today_include_prompt")}]
  return tmp_path, run_script_cases("extract_features.py", cases)


def test_a_folder_alone_writes_what_sentence_transformers_encodes(
    script_runs):
  tmp_path, outcomes = script_runs
  assert [code for code, _ in outcomes[:4]] == [0] * 4, outcomes
  for name in EMBEDDERS:
    for output in ("npz", "jsonl"):
      np.testing.assert_allclose(
          read_embeddings(tmp_path / f"{name}.{output}"),
          expected(name)["embeddings"], atol=1e-5, err_msg=name)


def test_layers_with_pooling_and_pooling_a_cross_encoder_are_refused(
    script_runs):
  tmp_path, outcomes = script_runs
  assert_fails_in_one_line(outcomes[4], "extract_features",
                           r"--layers=-1 and --pooling=mean: ")
  assert_fails_in_one_line(outcomes[5], "extract_features",
                           r"--pooling=mean: --init_checkpoint=.*"
                           r"cross_encoder is a CrossEncoder")
  assert not (tmp_path / "refused.npz").exists()


def test_truncate_dim_and_precision_write_sentence_transformers_values(
    script_runs):
  """The folder's weightedmean and truncate_dim (16), or --truncate_dim,
  then quantize_embeddings of the whole file (int8 calibrated on its
  lines): npz of int8, JSONL of the bytes."""
  tmp_path, outcomes = script_runs
  assert [code for code, _ in outcomes[6:8]] == [0, 0], outcomes[6:8]
  arrays = expected("today_weightedmean")
  np.testing.assert_array_equal(
      read_embeddings(tmp_path / "int8.npz", np.int8),
      bert_tf.quantize_embeddings(arrays["embeddings_8"], "int8"))
  np.testing.assert_array_equal(
      read_embeddings(tmp_path / "ubinary.jsonl", np.uint8),
      bert_tf.quantize_embeddings(arrays["embeddings"], "ubinary"))


def test_include_prompt_and_truncate_dim_in_the_file_and_serve_text(
    script_runs):
  """The prompt's tokens left out of the pooling in the file and in
  serve_text, both cut at the truncate_dim asked for."""
  tmp_path, outcomes = script_runs
  assert outcomes[8][0] == 0, outcomes[8]
  folder = os.path.join(FOLDERS, "today_include_prompt")
  arrays = expected("today_include_prompt")
  want = arrays["embeddings"][:, :16]
  np.testing.assert_allclose(read_embeddings(tmp_path / "include_prompt.npz"),
                             want, atol=1e-5)
  source = bert_tf.open_model_directory(folder)
  _, signatures = embedding_serving(
      bert_tf.load_pretrained(folder, truncate_dim=16).model,
      InGraphTokenizer(source.vocabulary, source.casing()), 20)
  served = signatures["serve_text"](tf.constant(arrays["texts"]))
  np.testing.assert_allclose(served["embedding"], want, atol=1e-5)


def test_int8_of_one_line_is_refused_before_it_runs(tmp_path):
  texts_file(tmp_path / "one.txt", ["a lake"])
  with pytest.raises(ValueError, match="^--precision=int8: calibrated on "
                                       "the file's embeddings, which takes "
                                       "at least 2 lines$"):
    extract_features(ExtractionOptions(
        input_file=str(tmp_path / "one.txt"),
        output_file=str(tmp_path / "one.npz"), output_format="npz",
        init_checkpoint=os.path.join(FOLDERS, "today_mean"),
        precision="int8"), tf.distribute.get_strategy())
  assert not (tmp_path / "one.npz").exists()


def test_the_export_serves_encode_from_text_and_from_ids(script_runs):
  """Served without bert_tf: serve_text applies the folder's default
  prompt; serving_default takes ids as given (here with the prompt)."""
  tmp_path, _ = script_runs
  arrays = expected("today_mean")
  tokenizer = tokenization.FullTokenizer(
      os.path.join(FOLDERS, "today_mean", "tokenizer.json"), True)
  ids = encode_texts(tokenizer, ["query: " + text for text in
                                 arrays["texts"]], max_seq_length=20)
  signatures, served = serve_export(tmp_path / "export" / "1", {
      "serve_text": {"text": arrays["texts"]}, "serving_default": ids},
                                    tmp_path)
  assert signatures == ["serve_text", "serving_default"]
  for name in signatures:
    assert list(served[name]) == ["embedding"]
    np.testing.assert_allclose(served[name]["embedding"],
                               arrays["embeddings"], atol=1e-5)


def test_pooling_a_plain_folder_pools_the_encoders_last_layer(tmp_path):
  texts = [str(text) for text in expected("today_mean")["texts"]]
  encoder = bert_tf.load_pretrained(PLAIN_FOLDER,
                                    model_class=bert_tf.BertEncoder)
  features = encode_texts(tokenization.FullTokenizer(
      encoder.vocab_file, encoder.do_lower_case), [
          text.strip() for text in texts], max_seq_length=64)
  tokens = encoder.model(features)["sequence_output"].numpy()
  mask = features["input_mask"][:, :, None].astype(np.float32)
  count = mask.sum(axis=1)
  pooled = {"cls": tokens[:, 0],
            "mean": (tokens * mask).sum(axis=1) / count,
            "max": np.where(mask > 0, tokens, -np.inf).max(axis=1),
            "mean_sqrt_len": (tokens * mask).sum(axis=1) / np.sqrt(count)}
  for pooling, normalize in (("mean", True), ("max", False),
                             ("mean_sqrt_len", False), ("cls", True)):
    want = pooled[pooling]
    if normalize:
      want = want / np.linalg.norm(want, axis=1, keepdims=True)
    got = extracted(tmp_path, init_checkpoint=PLAIN_FOLDER, pooling=pooling,
                    normalize=normalize or None, max_seq_length=64)
    np.testing.assert_allclose(got, want, atol=1e-5, err_msg=pooling)


def test_flags_replace_a_folders_pooling_and_normalize_only(tmp_path):
  """--nonormalize keeps today_mean's mean pooling and prompt; --pooling=mean
  keeps classic_cls_dense's Dense and max length."""
  arrays = expected("today_mean")
  got = extracted(tmp_path, init_checkpoint=os.path.join(
      FOLDERS, "today_mean"), normalize=False)
  norms = np.linalg.norm(got, axis=1, keepdims=True)
  assert np.abs(norms - 1).max() > 0.1
  np.testing.assert_allclose(got / norms, arrays["embeddings"], atol=1e-5)
  folder = os.path.join(FOLDERS, "classic_cls_dense")
  got = extracted(tmp_path, "output.jsonl", init_checkpoint=folder,
                  pooling="mean", normalize=True)
  model = bert_tf.load_pretrained(folder, pooling="mean",
                                  normalize=True).model
  assert got.shape == (len(arrays["texts"]), 16)
  np.testing.assert_allclose(got, model.encode(arrays["texts"]), atol=1e-5)


def test_an_explicit_max_seq_length_wins_up_to_the_position_table(tmp_path):
  folder = os.path.join(FOLDERS, "classic_cls_dense")
  arrays = expected("classic_cls_dense")
  long_text = [len(text) for text in arrays["texts"]].index(
      max(len(text) for text in arrays["texts"]))
  got = extracted(tmp_path, init_checkpoint=folder, max_seq_length=64)
  others = np.arange(len(got)) != long_text
  np.testing.assert_allclose(got[others], arrays["embeddings"][others],
                             atol=1e-5)
  assert np.abs(got[long_text] - arrays["embeddings"][long_text]).max() > \
      1e-3
  with pytest.raises(ValueError, match="sequence length 65 because"):
    extracted(tmp_path, init_checkpoint=folder, max_seq_length=65)


def test_layers_alone_on_a_folder_give_the_per_token_output(tmp_path):
  extract_features(ExtractionOptions(
      input_file=str(texts_file(tmp_path / "texts.txt", ["a lake"])),
      output_file=str(tmp_path / "layers.npz"), output_format="npz",
      init_checkpoint=os.path.join(FOLDERS, "today_mean"), layers="-1",
      max_seq_length=20),
                   tf.distribute.get_strategy())
  arrays = np.load(tmp_path / "layers.npz")
  assert arrays["values"].shape == (4, 1, 32)  # [CLS] a lake [SEP]


def multi_mode_dense_folder(path):
  """classic_cls_dense pooling cls and mean, its Dense taking both."""
  shutil.copytree(os.path.join(FOLDERS, "classic_cls_dense"), path)
  pooling_file = path / "1_Pooling" / "config.json"
  pooling = json.loads(pooling_file.read_text())
  pooling_file.write_text(json.dumps(
      {**pooling, "pooling_mode_mean_tokens": True}))
  dense_file = path / "2_Dense" / "config.json"
  dense_file.write_text(json.dumps(
      {**json.loads(dense_file.read_text()), "in_features": 64}))
  save_file({"linear.weight": np.zeros((16, 64), np.float32),
             "linear.bias": np.zeros(16, np.float32)},
            str(path / "2_Dense" / "model.safetensors"))
  return str(path)


@pytest.mark.parametrize("flags, message", [
    ({"init_checkpoint": PLAIN_FOLDER, "normalize": True},
     r"^--normalize applies to a pooled embedding: give --pooling too"),
    ({"init_checkpoint": os.path.join(FOLDERS, "today_mean"),
      "normalize": False, "layers": "-1"},
     r"^--layers=-1 and --nonormalize: "),
    ({"init_checkpoint": "multi_mode_dense", "pooling": "cls"},
     r"^--pooling=cls: the Dense modules of --init_checkpoint=.* take its 2 "
     r"pooling modes concatenated \(cls, mean\)"),
    ({"init_checkpoint": PLAIN_FOLDER, "pooling": "sum"},
     r"^--pooling=sum: expected cls or mean or max or mean_sqrt_len or "
     r"weightedmean$"),
    ({"init_checkpoint": PLAIN_FOLDER, "precision": "int8"},
     r"^--precision=int8: applies to sentence embeddings \(--pooling, or a "
     r"sentence-transformers embedder's folder\), not the per-token output$"),
    ({"init_checkpoint": os.path.join(FOLDERS, "today_mean"), "layers": "-1",
      "truncate_dim": 8, "precision": "binary"},
     r"^--truncate_dim=8 and --precision=binary: applies to sentence "
     r"embeddings"),
    ({"init_checkpoint": PLAIN_FOLDER, "pooling": "mean", "truncate_dim": 0},
     r"^--truncate_dim=0: expected 1 to the embedding's 32 dimensions$"),
    ({"init_checkpoint": os.path.join(FOLDERS, "classic_cls_dense"),
      "truncate_dim": 17},
     r"^--truncate_dim=17: expected 1 to the embedding's 16 dimensions$"),
    ({"init_checkpoint": PLAIN_FOLDER, "pooling": "mean",
      "precision": "int4"},
     r"^--precision=int4: expected float32 or int8 or uint8 or binary or "
     r"ubinary$"),
    ({"init_checkpoint": PLAIN_FOLDER, "pooling": "mean", "precision": "int8",
      "output_file": None, "input_file": None, "export_dir": "export"},
     r"^--precision=int8: quantizes the embeddings written for "
     r"--input_file; the export serves float32$"),
])
def test_refusals_name_the_flags(tmp_path, flags, message):
  if flags["init_checkpoint"] == "multi_mode_dense":
    flags = {**flags, "init_checkpoint": multi_mode_dense_folder(
        tmp_path / "folder")}
  with pytest.raises(ValueError, match=message):
    extracted(tmp_path, **flags)
  assert not (tmp_path / "output.npz").exists()


def test_a_folder_whose_transformer_is_in_a_subfolder(tmp_path):
  """Older sentence-transformers folders keep the BERT in a module folder
  (modules.json's path "0_Transformer"): it is read from there, by
  load_pretrained and by a run's --init_checkpoint alike."""
  folder = shutil.copytree(os.path.join(FOLDERS, "today_mean"),
                           tmp_path / "folder")
  module = folder / "0_Transformer"
  module.mkdir()
  for name in ("config.json", "model.safetensors", "tokenizer.json",
               "tokenizer_config.json", "sentence_bert_config.json"):
    shutil.move(folder / name, module / name)
  modules = json.loads((folder / "modules.json").read_text())
  modules[0]["path"] = "0_Transformer"
  (folder / "modules.json").write_text(json.dumps(modules))
  want = expected("today_mean")
  embedder = bert_tf.load_pretrained(str(folder)).model
  np.testing.assert_allclose(embedder.encode(want["texts"].tolist()),
                             want["embeddings"], atol=1e-5)
  np.testing.assert_allclose(
      extracted(tmp_path, init_checkpoint=str(folder)), want["embeddings"],
      atol=1e-5)
