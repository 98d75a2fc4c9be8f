"""run_setup: --init_checkpoint naming a model directory stands for the
config, vocabulary and casing flags, and a flag that disagrees is refused."""

import json
import logging
import os
import shutil

import pytest

import bert_tf
from bert_tf.runs import run_files
from bert_tf.runs import run_setup
from tests.support.helpers import ORIGINAL_TINY, PROJECT_DIR, SHARED_DIR

HF_CLASSIFIER = os.path.join(SHARED_DIR, "reference", "huggingface",
                             "bert_for_sequence_classification")
# Written by transformers 5: tokenizer.json, no vocab.txt.
TRANSFORMERS5 = os.path.join(PROJECT_DIR, "tests", "fixtures", "huggingface",
                             "transformers5_classifier")
CASED_WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [
    f"Word{index}" for index in range(94)]


@pytest.fixture(name="release")
def release_fixture(tmp_path):
  """original_tiny with a cased vocab.txt beside it, as Google ships one."""
  directory = tmp_path / "release"
  shutil.copytree(ORIGINAL_TINY, directory)
  (directory / "vocab.txt").write_text("\n".join(CASED_WORDS) + "\n")
  return directory


def resolve(init_checkpoint, bert_config_file=None, vocab_file=None,
            do_lower_case=None):
  return run_setup.resolve_run_model(
      str(init_checkpoint) if init_checkpoint else None,
      bert_config_file and str(bert_config_file),
      vocab_file and str(vocab_file), do_lower_case, max_seq_length=32)


@pytest.mark.shared
@pytest.mark.parametrize("kind", ["release", "release_prefix", "huggingface",
                                  "transformers5"])
def test_a_model_directory_alone_gives_config_vocabulary_and_casing(
    release, kind, caplog):
  directory, config_file, vocab_file, lower = {
      "release": (release, "bert_config.json", "vocab.txt", False),
      "release_prefix": (release / "bert_model.ckpt", "bert_config.json",
                         "vocab.txt", False),
      "huggingface": (HF_CLASSIFIER, "config.json", "vocab.txt", True),
      "transformers5": (TRANSFORMERS5, "config.json", "tokenizer.json",
                        True)}[kind]
  folder = release if kind.startswith("release") else directory
  with caplog.at_level(logging.INFO):
    model = resolve(directory)
  assert model.config_file == os.path.join(folder, config_file)
  assert model.vocab_file == os.path.join(folder, vocab_file)
  assert model.do_lower_case is lower
  assert model.config.hidden_size == 32
  assert f"vocab_file: {model.vocab_file} (from --init_checkpoint" in \
      caplog.text
  assert "bert_config: " in caplog.text and "do_lower_case: " in caplog.text


@pytest.mark.shared
def test_the_checkpoint_named_is_the_one_opened(release):
  """--init_checkpoint naming one of a directory's checkpoints is resolved
  once: the run opens that one, not the directory's newest."""
  for path in release.glob("bert_model.ckpt.*"):
    shutil.copy(path, release / path.name.replace("bert_model", "older"))
  (release / "checkpoint").write_text(
      'model_checkpoint_path: "bert_model.ckpt"\n')
  model = resolve(release / "older.ckpt")
  assert model.init_checkpoint == str(release / "older.ckpt")
  assert model.source.path == model.init_checkpoint


@pytest.mark.shared
def test_agreeing_flags_are_taken_and_a_run_may_set_its_own_dropout(
    release, tmp_path):
  values = json.loads((release / "bert_config.json").read_text())
  values["hidden_dropout_prob"] = 0.3
  own = tmp_path / "own_config.json"
  own.write_text(json.dumps(values))
  model = resolve(release, own, release / "vocab.txt", False)
  assert model.config.hidden_dropout_prob == 0.3
  assert model.config_file == str(own)


@pytest.mark.shared
@pytest.mark.parametrize("flag", ["bert_config_file", "vocab_file",
                                  "do_lower_case"])
def test_a_flag_that_disagrees_with_the_directory_is_refused_naming_both(
    release, tmp_path, flag):
  values = json.loads((release / "bert_config.json").read_text())
  values["intermediate_size"] = 40
  (tmp_path / "wider.json").write_text(json.dumps(values))
  (tmp_path / "vocab.txt").write_text("\n".join(CASED_WORDS[::-1]) + "\n")
  arguments, expected = {
      "bert_config_file": (
          dict(bert_config_file=tmp_path / "wider.json"),
          "--bert_config_file=.*wider.json is not the config of "
          "--init_checkpoint's .*release/bert_config.json: intermediate_size "
          "40 against 37"),
      "vocab_file": (
          dict(vocab_file=tmp_path / "vocab.txt"),
          "--vocab_file=.*/vocab.txt is not the vocabulary of "
          "--init_checkpoint's .*release/vocab.txt"),
      # (A release states no casing: its vocabulary's is only warned of.)
      "do_lower_case": (
          dict(do_lower_case=False),
          "--do_lower_case=False, but .*transformers5_classifier/"
          "tokenizer.json says do_lower_case True")}[flag]
  directory = TRANSFORMERS5 if flag == "do_lower_case" else release
  with pytest.raises(ValueError, match=expected):
    resolve(directory, **arguments)


def test_without_a_model_directory_the_flags_are_required(tmp_path):
  with pytest.raises(ValueError, match="--bert_config_file is required, "
                     "unless --init_checkpoint names a model directory"):
    resolve(None)
  config = tmp_path / "bert_config.json"
  config.write_text(bert_tf.BertConfig(vocab_size=99, hidden_size=32,
                                       num_hidden_layers=2,
                                       num_attention_heads=4,
                                       intermediate_size=37).to_json_string())
  with pytest.raises(ValueError, match="--vocab_file is required"):
    resolve(None, config)


@pytest.mark.shared
def test_an_output_dir_holding_another_models_files_is_refused(release,
                                                               tmp_path):
  model = resolve(release)
  files = run_setup.model_files(model, {"id2label": {"0": "no"}})
  assert sorted(files) == ["bert_config.json", "vocab.txt"]
  assert json.loads(files["bert_config.json"])["id2label"] == {"0": "no"}
  output_dir = tmp_path / "output"
  run_files.write_model_files(str(output_dir), files)
  assert (output_dir / "vocab.txt").read_bytes() == \
      (release / "vocab.txt").read_bytes()
  # The same files again (a resumed run) are taken as they are ...
  run_files.check_run_outputs(str(output_dir), [], model.input_files(),
                              model.source, model_files=files)
  # ... another model's are not.
  files["vocab.txt"] = b"[PAD]\n"
  with pytest.raises(ValueError, match="--output_dir=.*output holds a "
                     "vocab.txt that is not this run's model's"):
    run_files.check_run_outputs(str(output_dir), [], model.input_files(),
                                model.source, model_files=files)


@pytest.mark.shared
def test_a_tokenizer_json_folder_gives_its_tokenizer_files(tmp_path):
  model = resolve(TRANSFORMERS5)
  files = run_setup.model_files(model)
  assert sorted(files) == ["bert_config.json", "tokenizer.json",
                           "tokenizer_config.json"]
