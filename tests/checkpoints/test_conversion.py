"""convert() and write_model_directory on sentence-transformers folders:
their modules and a cross-encoder's activation kept (that
sentence-transformers 5 and 6 load the converted folders with the same
outputs is checked with them installed by
tests/fixtures/sentence_transformers/check_saved_folders.py), what an
original-format directory cannot hold refused, nothing read from outside
the input, and the output written in place into an existing directory with
every file readable as the umask allows."""

import json
import os
import shutil
import stat
import uuid

import pytest

import bert_tf
from bert_tf.checkpoints import conversion
from bert_tf.checkpoints.sentence_transformers.activations import (
    TORCH_ACTIVATIONS)
from tests.support.sentence_transformers_folders import (
    assert_as_sentence_transformers, expected, folder)

def _json(path):
  with open(path, encoding="utf-8") as reader:
    return json.load(reader)


def _scores(model, name):
  values = expected(name)
  return model((values["firsts"], values["seconds"]))["scores"]


def _modes(directory):
  """{path inside: permission bits} of every file under directory."""
  return {os.path.relpath(os.path.join(root, name), directory):
          stat.S_IMODE(os.stat(os.path.join(root, name)).st_mode)
          for root, _, names in os.walk(directory) for name in names}


@pytest.mark.parametrize("name", ["today_mean_sqrt_len", "classic_cls_dense"])
def test_an_embedder_converts_with_its_modules(tmp_path, name):
  """Its Pooling, Dense and Normalize modules and its max length (the
  classic folder's, 16, from sentence_bert_config.json) are written as
  save_pretrained writes them."""
  out = tmp_path / "out"
  conversion.convert(folder(name), str(out), conversion.HUGGINGFACE)
  saved = tmp_path / "saved"
  bert_tf.load_pretrained(folder(name)).model.save_pretrained(saved)
  for relative in ("modules.json", "1_Pooling/config.json",
                   "2_Dense/config.json", "sentence_bert_config.json",
                   "config_sentence_transformers.json"):
    assert _json(out / relative) == _json(saved / relative), relative
  assert _json(out / "tokenizer_config.json")["model_max_length"] == _json(
      saved / "tokenizer_config.json")["model_max_length"]
  embedder = bert_tf.load_pretrained(str(out)).model
  assert_as_sentence_transformers(embedder.encode(expected(name)["texts"]),
                                  expected(name)["embeddings"])


@pytest.mark.parametrize("name, modules", [
    ("today_mean_sqrt_len", "Pooling, Dense"),
    ("classic_cls_dense", "Pooling, Dense, Normalize")])
def test_an_embedder_has_no_original_format(tmp_path, name, modules):
  with pytest.raises(ValueError, match=(
      f"^{folder(name)}: a sentence-transformers embedder; an original-"
      rf"format checkpoint has no place for its modules \({modules}\), which "
      f"would be lost: --output_format=huggingface keeps them$")):
    conversion.convert(folder(name), str(tmp_path / "out"),
                       conversion.ORIGINAL)
  assert not os.listdir(tmp_path)


@pytest.mark.parametrize("name, activation", [
    ("cross_encoder_identity", "linear"), ("cross_encoder_v4", "sigmoid")])
def test_a_cross_encoder_keeps_its_activation_either_way(tmp_path, name,
                                                         activation):
  """To the original format (bert_config.json records it as config.json
  does) and back to a Hugging Face folder, whose config.json records it as
  sentence-transformers 4 and later read it. (The original format keeps no
  max length: it is given.)"""
  original, back = tmp_path / "original", tmp_path / "back"
  conversion.convert(folder(name), str(original), conversion.ORIGINAL)
  conversion.convert(str(original), str(back), conversion.HUGGINGFACE)
  for config_file in (original / "bert_config.json", back / "config.json"):
    assert _json(config_file)["sentence_transformers"] == {
        "activation_fn": TORCH_ACTIVATIONS[activation]}
  max_length = _json(os.path.join(folder(name), "tokenizer_config.json"))[
      "model_max_length"]
  for directory in (original, back):
    model = bert_tf.BertClassifier.from_pretrained(
        str(directory), max_seq_length=max_length)
    assert model.score_activation == activation
    assert_as_sentence_transformers(_scores(model, name),
                                    expected(name)["scores"])


def test_a_folder_under_a_snapshots_folder_copies_no_secret(tmp_path):
  """~/snapshots/my-model is no cache snapshot: its link to ~/.secrets is
  refused, and nothing is written."""
  (tmp_path / ".secrets").mkdir()
  (tmp_path / ".secrets" / "credentials.json").write_text(
      '{"do_lower_case": true, "token": "hf_secret"}')
  model = tmp_path / "snapshots" / "my-model"
  shutil.copytree(folder("cross_encoder_v4"), model)
  os.remove(model / "tokenizer_config.json")
  os.symlink("../../.secrets/credentials.json",
             model / "tokenizer_config.json")
  for call in (lambda: bert_tf.load_pretrained(str(model)),
               lambda: conversion.convert(str(model), str(tmp_path / "out"),
                                          conversion.HUGGINGFACE)):
    with pytest.raises(ValueError, match=(
        "tokenizer_config.json resolves to .*/.secrets/credentials.json, "
        "outside")):
      call()
  assert not (tmp_path / "out").exists()


def test_a_cache_snapshot_converts_from_its_blobs(tmp_path):
  """transformers' cache: every file a link to ../../blobs/<hash>; the
  output holds the files themselves."""
  cache = tmp_path / "models--cross-encoder--ms-marco-tiny"
  snapshot = cache / "snapshots" / "0123abc"
  snapshot.mkdir(parents=True)
  (cache / "blobs").mkdir()
  for name in os.listdir(folder("cross_encoder_v4")):
    blob = uuid.uuid4().hex
    shutil.copy(os.path.join(folder("cross_encoder_v4"), name),
                cache / "blobs" / blob)
    os.symlink(f"../../blobs/{blob}", snapshot / name)
  conversion.convert(str(snapshot), str(tmp_path / "out"),
                     conversion.HUGGINGFACE)
  out = tmp_path / "out"
  assert not [name for name in os.listdir(out)
              if os.path.islink(out / name)]
  with open(out / "vocab.txt", "rb") as written, open(
      os.path.join(folder("cross_encoder_v4"), "vocab.txt"), "rb") as source:
    assert written.read() == source.read()


def test_an_existing_directory_is_written_in_place(tmp_path, monkeypatch):
  """It stays the directory it was (inode, mode); its files are renamed
  into it, its config.json last (a sentence-transformers folder's
  modules.json before it); what a killed run left inside it is removed
  first."""
  out = tmp_path / "out"
  out.mkdir()
  os.chmod(out, 0o750)
  inode = os.stat(out).st_ino
  killed = out / f"model.tmp-{uuid.uuid4().hex}"
  killed.mkdir()
  (killed / "config.json").write_text("{}")
  renamed = []
  rename = os.rename

  def recording_rename(source, target):
    renamed.append(os.path.relpath(target, out))
    rename(source, target)

  monkeypatch.setattr(os, "rename", recording_rename)
  conversion.convert(folder("today_mean"), str(out), conversion.HUGGINGFACE)
  assert (os.stat(out).st_ino, stat.S_IMODE(os.stat(out).st_mode)) == (
      inode, 0o750)
  assert sorted(os.listdir(out)) == sorted(renamed) == [
      "1_Pooling", "2_Normalize", "config.json",
      "config_sentence_transformers.json", "model.safetensors",
      "modules.json", "sentence_bert_config.json", "tokenizer.json",
      "tokenizer_config.json"]
  assert renamed[-3:] == ["modules.json", "config_sentence_transformers.json",
                          "config.json"]


@pytest.mark.parametrize("output_format", ["huggingface", "original"])
@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_every_file_written_has_the_umask_s_mode(tmp_path, output_format,
                                                 umask):
  """model.safetensors too, whose writer makes 0600 files."""
  previous = os.umask(umask)
  try:
    conversion.convert(folder("today_mean_sqrt_len") if output_format ==
                       "huggingface" else folder("cross_encoder"),
                       str(tmp_path / "out"), output_format)
  finally:
    os.umask(previous)
  modes = _modes(tmp_path / "out")
  assert len(modes) >= 4
  assert modes == dict.fromkeys(modes, 0o666 & ~umask)
