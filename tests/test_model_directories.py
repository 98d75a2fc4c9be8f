"""Model directories as they are found in the world, through load_pretrained
and every runner's --init_checkpoint: Google's releases (17-field configs,
.meta files, no `checkpoint` index), community checkpoints saved mid-training
by the original code (tests/fixtures/community_checkpoint, with optimizer
slots), and Hugging Face folders written by transformers."""

import json
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from bert_tf.checkpoints import conversion
from bert_tf.checkpoints.original import checkpoint_writer
from bert_tf.checkpoints.huggingface.reader import HuggingFaceFolder
from bert_tf.checkpoints.original import tf_checkpoints
from tests.support.helpers import (ORIGINAL_TINY, PROJECT_DIR, SHARED_DIR,
                                   assert_cases_fail_before_writing,
                                   assert_fails_in_one_line, run_script,
                                   run_script_cases, within_seconds)
from tests.support.serving import serve_export
from tests.support.squad_fixtures import synthetic_squad

COMMUNITY = os.path.join(PROJECT_DIR, "tests", "fixtures",
                         "community_checkpoint", "biobert_style")
HUGGINGFACE_QA = os.path.join(SHARED_DIR, "reference", "huggingface",
                              "bert_for_question_answering")
pytestmark = pytest.mark.shared


def test_a_community_checkpoint_loads_as_the_original_computes_it():
  pretrained = bert_tf.load_pretrained(COMMUNITY)
  report = pretrained.load_report
  assert isinstance(pretrained.model, bert_tf.BertPretrainer)
  assert report.checkpoint == os.path.join(COMMUNITY, "model.ckpt-5")
  assert len(report.loaded) == 46 and report.unused == []
  assert report.not_in_checkpoint == []
  assert sorted(report.ignored) == sorted(
      ["global_step"] + [f"{name}/{slot}" for name in report.loaded
                         for slot in ("adam_m", "adam_v")])
  expected = np.load(os.path.join(COMMUNITY, "expected.npz"))
  out = pretrained.model.encoder(
      {name: expected[name]
       for name in ("input_ids", "input_mask", "segment_ids")},
      training=False)
  for name in ("sequence_output", "pooled_output"):
    np.testing.assert_allclose(out[name], expected[name], rtol=0, atol=1e-5)
  # Its 17-field bert_config.json is kept as it is.
  assert pretrained.config.extra_fields["pooler_type"] == \
      "first_token_transform"


def released_layout(tmp_path):
  """original_tiny as Google's zips unpack: bert_model.ckpt.{data,index,
  meta}, no `checkpoint` file, a 17-field bert_config.json."""
  directory = tmp_path / "multi_cased_L-2_H-32_A-4"
  directory.mkdir()
  for suffix in (".index", ".data-00000-of-00001"):
    shutil.copy(f"{ORIGINAL_TINY}/bert_model.ckpt{suffix}", directory)
  shutil.copy(f"{COMMUNITY}/model.ckpt-5.meta",
              directory / "bert_model.ckpt.meta")
  values = json.load(open(f"{ORIGINAL_TINY}/bert_config.json"))
  values.update(directionality="bidi", pooler_fc_size=32,
                pooler_num_attention_heads=4, pooler_num_fc_layers=3,
                pooler_size_per_head=128, pooler_type="first_token_transform")
  (directory / "bert_config.json").write_text(json.dumps(
      values, indent=2, sort_keys=True, separators=(", ", ": ")))
  (directory / "vocab.txt").write_text(
      "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n" +
      "".join(f"word{index}\n" for index in range(94)))
  return directory


def test_a_released_layout_loads_from_its_directory(tmp_path):
  directory = released_layout(tmp_path)
  assert tf_checkpoints.resolve_checkpoint_path(str(directory)) == \
      str(directory / "bert_model.ckpt")
  pretrained = bert_tf.load_pretrained(str(directory))
  assert len(pretrained.load_report.loaded) == 46
  expected = np.load(f"{ORIGINAL_TINY}/expected.npz")
  out = pretrained.model.encoder(
      {name: expected[name]
       for name in ("input_ids", "input_mask", "segment_ids")},
      training=False)
  np.testing.assert_allclose(out["sequence_output"],
                             expected["sequence_output"], rtol=0, atol=1e-5)


def test_extract_features_takes_every_layout_as_init_checkpoint(tmp_path):
  """The released layout by directory and by prefix, the community one
  likewise, and a Hugging Face folder (no pooler) with its config.json;
  the same checkpoint gives the same lines whichever way it is named."""
  released = released_layout(tmp_path)
  (tmp_path / "input.txt").write_text("the cell ||| word1 word2\nwhat\n")
  runs = {
      "released_dir": (released, released),
      "released_prefix": (released, released / "bert_model.ckpt"),
      "community_dir": (COMMUNITY, COMMUNITY),
      "community_prefix": (COMMUNITY, f"{COMMUNITY}/model.ckpt-5"),
      "huggingface": (HUGGINGFACE_QA, HUGGINGFACE_QA),
  }
  cases = [{"input_file": tmp_path / "input.txt",
            "vocab_file": f"{directory}/vocab.txt",
            "bert_config_file": f"{directory}/" + (
                "config.json" if name == "huggingface"
                else "bert_config.json"),
            "init_checkpoint": init_checkpoint, "max_seq_length": 12,
            "layers": "-1", "output_file": tmp_path / f"{name}.jsonl"}
           for name, (directory, init_checkpoint) in runs.items()]
  cased = {**cases[-1], "do_lower_case": "false",
           "output_file": tmp_path / "cased.jsonl"}
  outcomes = run_script_cases("extract_features.py", cases + [cased])
  assert [code for code, _ in outcomes[:-1]] == [0] * len(runs), outcomes
  assert_fails_in_one_line(
      outcomes[-1], "extract_features",
      r"--do_lower_case=False, but .*bert_for_question_answering/"
      r"tokenizer_config.json says do_lower_case True")
  read = {name: (tmp_path / f"{name}.jsonl").read_text() for name in runs}
  assert read["released_dir"] == read["released_prefix"]
  assert read["community_dir"] == read["community_prefix"]
  assert len(read["huggingface"].splitlines()) == 2
  assert not (tmp_path / "cased.jsonl").exists()


# A long run repeating TensorFlow work other tests do too (run_squad's
# training, export and serve_text: tests/run_scripts/test_run_squad.py; a
# folder's weights, read by Python, as run_classifier's --lora_rank tests
# start from them); one leg of CI runs it.
@pytest.mark.rerun
def test_run_squad_fine_tunes_a_huggingface_folder_and_serves_raw_text(
    tmp_path):
  """The folder alone gives the config, vocabulary and casing."""
  synthetic_squad(tmp_path / "train.json", seed=0, num_paragraphs=8)
  result = run_script("run_squad.py", {
      "init_checkpoint": HUGGINGFACE_QA, "train_file": tmp_path / "train.json",
      "output_dir": tmp_path / "output", "do_train": True,
      "train_batch_size": 8, "num_train_epochs": 1, "max_seq_length": 48,
      "doc_stride": 16, "max_query_length": 12, "seed": 1,
      "version_2_with_negative": True, "export_dir": tmp_path / "export"})
  assert result.returncode == 0, result.stderr[-3000:]
  assert "do_lower_case: True (from " in result.stderr
  # Its --output_dir converts to the folder's class as it is.
  conversion.convert(str(tmp_path / "output"), str(tmp_path / "hf"),
                     "huggingface")
  assert json.loads((tmp_path / "hf" / "config.json").read_text())[
      "architectures"] == ["BertForQuestionAnswering"]
  # Fine-tuned from the folder's weights (a few small steps away).
  tuned = tf.train.load_checkpoint(
      tf.train.latest_checkpoint(str(tmp_path / "output")))
  folder = HuggingFaceFolder(HUGGINGFACE_QA)
  for name in ("bert/embeddings/word_embeddings",
               "bert/encoder/layer_1/output/dense/kernel",
               "cls/squad/output_weights"):
    np.testing.assert_allclose(tuned.get_tensor(name),
                               folder.get_tensor(name), atol=0.01)
  _, outputs = serve_export(tmp_path / "export" / "1", {"serve_text": {
      "question": ["what is red?"],
      "context": ["the ball is red and the box is blue."]}}, tmp_path)
  answer = outputs["serve_text"]["answer"][0]
  assert answer in "the ball is red and the box is blue."


def test_a_converted_release_is_what_transformers_computes_as_the_original(
    tmp_path):
  """original_tiny (the original code's checkpoint and outputs) converted:
  tests/fixtures/huggingface/make_reference.py loaded exactly these bytes
  in transformers, which reported no missing or unexpected weight, and its
  outputs are the original's."""
  fixtures = os.path.join(PROJECT_DIR, "tests", "fixtures", "huggingface")
  reference = json.load(open(f"{fixtures}/converted_original_tiny.json"))
  theirs = np.load(f"{fixtures}/converted_original_tiny.npz")
  released = released_layout(tmp_path)
  conversion.convert(str(released), str(tmp_path / "hf"),
                     conversion.HUGGINGFACE)
  assert json.load(open(tmp_path / "hf" / "tokenizer_config.json")) == {
      "do_lower_case": True, "model_max_length": 64,
      "tokenizer_class": "BertTokenizer"}
  assert _sha256(tmp_path / "hf" / "config.json") == \
      reference["config_sha256"]
  from safetensors.numpy import load_file  # pylint: disable=import-outside-toplevel
  written = load_file(tmp_path / "hf" / "model.safetensors")
  assert {name: _sha256_bytes(value.tobytes())
          for name, value in written.items()} == reference["tensor_sha256"]
  assert reference["loading_info"] == {
      "error_msgs": [], "mismatched_keys": [], "missing_keys": [],
      "unexpected_keys": []}
  original = np.load(f"{ORIGINAL_TINY}/expected.npz")
  np.testing.assert_allclose(theirs["hidden_states_0"],
                             original["embedding_output"], atol=1e-5)
  np.testing.assert_allclose(theirs["hidden_states_2"],
                             original["sequence_output"], atol=1e-5)
  np.testing.assert_allclose(theirs["pooler_output"],
                             original["pooled_output"], atol=1e-5)
  logits = theirs["prediction_logits"]
  log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
  positions = original["masked_lm_positions"]
  np.testing.assert_allclose(
      np.take_along_axis(log_probs, positions[..., None], 1).reshape(
          -1, logits.shape[-1]), original["mlm_log_probs"], atol=1e-5)


def _sha256(path):
  return _sha256_bytes(open(path, "rb").read())


def _sha256_bytes(data):
  import hashlib  # pylint: disable=import-outside-toplevel
  return hashlib.sha256(data).hexdigest()


def _with_config(directory, **changes):
  values = json.load(open(directory / "bert_config.json"))
  values.update(changes)
  (directory / "bert_config.json").write_text(json.dumps(values))
  return directory


CONFIGS_THAT_ARE_NOT_THE_CHECKPOINTS = {
    r"bert_model.ckpt: holds 2 encoder layers, but .*bert_config.json says "
    r"num_hidden_layers 100000": {"num_hidden_layers": 100_000},
    r"bert_model.ckpt: variable bert/embeddings/word_embeddings is shaped "
    r"\[99, 32\], but .*bert_config.json makes it \[1000000000, 32\]":
        {"vocab_size": 10**9},
    r"variable bert/embeddings/word_embeddings is shaped \[99, 32\], but "
    r".* makes it \[99, 1000000000\]": {"hidden_size": 10**9,
                                       "num_attention_heads": 1},
    r"variable bert/encoder/layer_0/intermediate/dense/kernel is shaped "
    r"\[32, 37\], but .* makes it \[32, 1000000000\]":
        {"intermediate_size": 10**9},
    r"variable bert/embeddings/position_embeddings is shaped \[64, 32\], "
    r"but .* makes it \[1000000000, 32\]": {"max_position_embeddings": 10**9},
    r"variable bert/embeddings/token_type_embeddings is shaped \[2, 32\], "
    r"but .* makes it \[1000000000, 32\]": {"type_vocab_size": 10**9},
}


@pytest.mark.parametrize("message, changes",
                         CONFIGS_THAT_ARE_NOT_THE_CHECKPOINTS.items(),
                         ids=["layers", "vocab_size", "hidden_size",
                              "intermediate_size", "max_position_embeddings",
                              "type_vocab_size"])
def test_a_config_is_checked_against_its_checkpoint_before_building(
    tmp_path, message, changes):
  """Nothing is built or allocated for a config its checkpoint refutes."""
  directory = _with_config(released_layout(tmp_path), **changes)
  with pytest.raises(ValueError, match=message), within_seconds(10):
    bert_tf.load_pretrained(str(directory))
  with pytest.raises(ValueError, match=message), within_seconds(10):
    conversion.convert(str(directory), str(tmp_path / "hf"),
                       conversion.HUGGINGFACE)


def test_a_weight_that_is_not_a_float_is_not_converted(tmp_path):
  directory = released_layout(tmp_path)
  prefix = str(directory / "bert_model.ckpt")
  reader = tf.train.load_checkpoint(prefix)
  tensors = {name: tf.constant(reader.get_tensor(name))
             for name in reader.get_variable_to_shape_map()}
  tensors["bert/pooler/dense/bias"] = tf.range(32)
  checkpoint_writer.write_checkpoint(prefix, tensors)
  for output_format in conversion.FORMATS:
    with pytest.raises(ValueError, match=(
        "bert_model.ckpt: variable bert/pooler/dense/bias is int32, not "
        "floating point")):
      conversion.convert(str(directory), str(tmp_path / output_format),
                         output_format)
    assert not (tmp_path / output_format).exists()


# Refused before any work, in one line: Python's checks, the same on every
# TensorFlow (a config against its checkpoint, in process:
# test_a_config_is_checked_against_its_checkpoint_before_building); one leg
# of CI runs it.
@pytest.mark.rerun
def test_runners_check_the_config_and_vocabulary_before_any_work(tmp_path):
  """--bert_config_file against --init_checkpoint, and the vocabulary's
  special tokens, in one line before anything is built or written. (The
  checkpoint is alone in its directory: beside a config, a flag that
  disagrees with it is refused first, tests/runs/test_run_setup.py.)"""
  released = released_layout(tmp_path)
  (released / "bert_config.json").rename(tmp_path / "bert_config.json")
  (tmp_path / "train.tsv").write_text("sentence\tlabel\n" +
                                      "the cell\t1\n" * 8)
  configs = {}
  for name, changes in (("layers", {"num_hidden_layers": 3}),
                        ("vocab", {"vocab_size": 10**9})):
    configs[name] = tmp_path / f"{name}.json"
    configs[name].write_text(json.dumps({**json.load(open(
        tmp_path / "bert_config.json")), **changes}))
  (tmp_path / "no_unk.txt").write_text(
      (released / "vocab.txt").read_text().replace("[UNK]\n", "[UNK2]\n"))
  flag_values = {"task_name": "sst-2", "data_dir": tmp_path,
                 "vocab_file": released / "vocab.txt",
                 "bert_config_file": tmp_path / "bert_config.json",
                 "init_checkpoint": released, "do_train": True,
                 "max_seq_length": 16, "train_batch_size": 2}
  cases = {
      r"bert_model.ckpt: holds 2 encoder layers, but .*layers.json says "
      r"num_hidden_layers 3": {"bert_config_file": configs["layers"]},
      r"variable bert/embeddings/word_embeddings is shaped \[99, 32\], but "
      r".*vocab.json makes it \[1000000000, 32\]":
          {"bert_config_file": configs["vocab"]},
      r"no_unk.txt: no \[UNK\] token": {"vocab_file": tmp_path / "no_unk.txt"},
  }
  assert_cases_fail_before_writing("run_classifier.py", flag_values, cases,
                                   tmp_path)
  extract = run_script_cases("extract_features.py", [
      {"input_file": tmp_path / "train.tsv", "output_file": tmp_path / "x",
       "vocab_file": released / "vocab.txt", "init_checkpoint": released,
       "bert_config_file": configs["layers"], "max_seq_length": 16,
       "layers": "-1"}])
  assert_fails_in_one_line(extract[0], "extract_features",
                           "holds 2 encoder layers")
  assert not (tmp_path / "x").exists()
