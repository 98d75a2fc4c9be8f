"""A model directory's files are regular files inside it: no name or
symlink reads the user's other files, no FIFO or device hangs the reader."""

import os

import pytest

from bert_tf.files.model_files import (model_file, model_folder,
                                      required_model_file)


@pytest.fixture(name="folder")
def folder_with_a_secret(tmp_path):
  """A model folder, and a file of the user's beside it."""
  (tmp_path / "secret.txt").write_text("the user's\n")
  folder = tmp_path / "model"
  folder.mkdir()
  (folder / "config.json").write_text("{}")
  return folder


def test_a_regular_file_inside_is_given_and_a_missing_one_is_none(folder):
  (folder / "shards").mkdir()
  (folder / "shards" / "a.safetensors").write_bytes(b"")
  os.symlink("config.json", folder / "linked.json")
  assert model_file(str(folder), "config.json") == f"{folder}/config.json"
  assert model_file(str(folder), "shards/a.safetensors") == \
      f"{folder}/shards/a.safetensors"
  assert model_file(str(folder), "linked.json") == f"{folder}/linked.json"
  assert model_file(str(folder), "vocab.txt") is None
  with pytest.raises(FileNotFoundError, match="vocab.txt: missing; needed"):
    required_model_file(str(folder), "vocab.txt", "needed")


@pytest.mark.parametrize("name", ["../secret.txt", "shards/../../secret.txt",
                                  "ABSOLUTE"])
def test_a_name_leading_out_of_the_folder_is_refused(folder, name):
  name = str(folder.parent / "secret.txt") if name == "ABSOLUTE" else name
  with pytest.raises(ValueError, match=(
      f"index.json: '{name}' is not a file inside {folder}")):
    model_file(str(folder), name, listed_in="index.json")


def test_a_symlink_leading_out_of_the_folder_is_refused(folder):
  os.symlink(folder.parent / "secret.txt", folder / "vocab.txt")
  os.symlink("../secret.txt", folder / "relative.txt")
  for name in ("vocab.txt", "relative.txt"):
    with pytest.raises(ValueError, match=(
        f"{folder}/{name} resolves to {folder.parent}/secret.txt, outside")):
      model_file(str(folder), name)


def test_a_hugging_face_cache_snapshot_reads_its_blobs(tmp_path):
  """transformers' cache: snapshots/<revision>/<file> -> ../../blobs/<hash>."""
  cache = tmp_path / "models--org--bert"
  (cache / "blobs").mkdir(parents=True)
  (cache / "blobs" / "0a1b").write_text("{}")
  snapshot = cache / "snapshots" / "rev1"
  snapshot.mkdir(parents=True)
  os.symlink("../../blobs/0a1b", snapshot / "config.json")
  assert model_file(str(snapshot), "config.json") == \
      f"{snapshot}/config.json"
  (tmp_path / "elsewhere").write_text("{}")
  os.symlink("../../../elsewhere", snapshot / "vocab.txt")
  with pytest.raises(ValueError, match="outside"):
    model_file(str(snapshot), "vocab.txt")


def test_what_is_not_a_regular_file_is_refused_without_opening_it(folder):
  os.mkfifo(folder / "vocab.txt")
  (folder / "shard").mkdir()
  os.symlink("/dev/zero", folder / "zero.safetensors")
  os.symlink("nothing", folder / "dangling.json")
  os.symlink("loop.json", folder / "loop.json")
  for name, kind in (("vocab.txt", "a FIFO"), ("shard", "a directory"),
                     ("zero.safetensors", "a character device"),
                     ("dangling.json", "a symlink to nothing"),
                     ("loop.json", "a symlink loop")):
    with pytest.raises(ValueError, match=f"{folder}/{name} is {kind}"):
      model_file(str(folder), name)


def test_a_folder_inside_a_cache_snapshot_reads_its_blobs(tmp_path):
  """A sentence-transformers module's folder in transformers' cache:
  snapshots/<revision>/1_Pooling/config.json -> ../../../blobs/<hash>."""
  cache = tmp_path / "models--org--embedder"
  (cache / "blobs").mkdir(parents=True)
  (cache / "blobs" / "0a1b").write_text("{}")
  module = cache / "snapshots" / "rev1" / "1_Pooling"
  module.mkdir(parents=True)
  os.symlink("../../../blobs/0a1b", module / "config.json")
  snapshot = str(cache / "snapshots" / "rev1")
  folder = model_folder(snapshot, "1_Pooling", "modules.json: module 1")
  assert model_file(folder, "config.json") == f"{module}/config.json"


def test_a_module_folder_leading_out_is_refused(folder):
  (folder.parent / "elsewhere").mkdir()
  os.symlink("../elsewhere", folder / "linked")
  for name, message in (
      ("../elsewhere", "'../elsewhere' is not a folder inside"),
      ("/tmp", "'/tmp' is not a folder inside"),
      ("linked", f"'linked' resolves to {folder.parent}/elsewhere, outside")):
    with pytest.raises(ValueError, match=f"^modules.json: module 1: "
                                         f"{message}"):
      model_folder(str(folder), name, "modules.json: module 1")


def _cache_model(root, name="models--org--bert"):
  """A model of transformers' cache: <name>/blobs/ and
  <name>/snapshots/rev1/; returns the snapshot."""
  (root / name / "blobs").mkdir(parents=True)
  (root / name / "blobs" / "0a1b").write_text("{}")
  snapshot = root / name / "snapshots" / "rev1"
  snapshot.mkdir(parents=True)
  return snapshot


def test_a_repository_without_an_organisation_reads_its_blobs(tmp_path):
  """models--<repo>, as the cache names bert-base-uncased's."""
  snapshot = _cache_model(tmp_path, "models--bert-base-uncased")
  os.symlink("../../blobs/0a1b", snapshot / "config.json")
  assert model_file(str(snapshot), "config.json") == \
      f"{snapshot}/config.json"


def test_a_folder_below_any_snapshots_reads_nothing_outside_it(tmp_path):
  """A directory named snapshots is no cache: ~/snapshots/my-model may not
  link to ~/.secrets."""
  (tmp_path / ".secrets").mkdir()
  (tmp_path / ".secrets" / "credentials.json").write_text("{}")
  model = tmp_path / "snapshots" / "my-model"
  model.mkdir(parents=True)
  os.symlink("../../.secrets/credentials.json",
             model / "tokenizer_config.json")
  with pytest.raises(ValueError, match=(
      f"{model}/tokenizer_config.json resolves to {tmp_path}/.secrets/"
      f"credentials.json, outside {model};")):
    model_file(str(model), "tokenizer_config.json")


@pytest.mark.parametrize("layout", [
    "no blobs", "no models-- prefix", "datasets--", "models-- alone",
    "sibling snapshot", "the cache folder", "blobs a link out"])
def test_only_a_cache_models_blobs_are_inside_its_snapshots(tmp_path,
                                                            layout):
  """A link from snapshots/<revision>/ may reach its model's blobs/ and
  nothing else."""
  name = {"no models-- prefix": "org--bert", "datasets--": "datasets--org--x",
          "models-- alone": "models--"}.get(layout, "models--org--bert")
  snapshot = _cache_model(tmp_path, name)
  cache = snapshot.parent.parent
  target = "../../blobs/0a1b"
  if layout == "no blobs":
    os.rename(cache / "blobs", cache / "elsewhere")
    target = "../../elsewhere/0a1b"
  elif layout == "sibling snapshot":
    (cache / "snapshots" / "rev2").mkdir()
    (cache / "snapshots" / "rev2" / "config.json").write_text("{}")
    target = "../rev2/config.json"
  elif layout == "the cache folder":
    (cache / "refs").mkdir()
    (cache / "refs" / "main").write_text("rev1")
    target = "../../refs/main"
  elif layout == "blobs a link out":
    (tmp_path / "secret.json").write_text("{}")
    os.rename(cache / "blobs", cache / "real_blobs")
    os.symlink(tmp_path, cache / "blobs")
    target = "../../blobs/secret.json"
  os.symlink(target, snapshot / "config.json")
  with pytest.raises(ValueError, match="outside"):
    model_file(str(snapshot), "config.json")


@pytest.mark.parametrize("name, kind", [("fifo", "a FIFO"),
                                        ("file", "a file"),
                                        ("zero", "a character device")])
def test_a_module_folder_that_is_no_folder_is_named(folder, name, kind):
  os.mkfifo(folder / "fifo")
  (folder / "file").write_text("{}")
  os.symlink("/dev/zero", folder / "zero")
  with pytest.raises(ValueError, match=(
      f"^modules.json: module 1: '{name}' is {kind}, not a folder$")):
    model_folder(str(folder), name, "modules.json: module 1")


@pytest.mark.parametrize("name", ["", ".", "./", "sub/.."])
def test_the_directory_itself_is_a_module_folder(folder, name):
  (folder / "sub").mkdir()
  assert model_folder(str(folder), name, "modules.json: module 0") == \
      str(folder)
