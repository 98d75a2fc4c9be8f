"""What a conversion keeps: each tensor's dtype (float16 and bfloat16
weights stay half the size) unless another is asked for, while a bert_tf
model loads a half precision checkpoint as float32; and config.json's name
of the activation."""

import json
import os
import shutil

import ml_dtypes
import numpy as np
import pytest
import tensorflow as tf
from safetensors.numpy import load_file, save_file

import bert_tf
from bert_tf.checkpoints import conversion
from tests.support.helpers import SHARED_DIR

SOURCE = os.path.join(SHARED_DIR, "reference", "huggingface",
                      "bert_for_sequence_classification")
# Left float32 in the half precision copy: a source of mixed dtypes.
FLOAT32_TENSOR = "classifier.bias"
pytestmark = pytest.mark.shared


def half_precision_copy(tmp_path, dtype):
  """SOURCE with every tensor but FLOAT32_TENSOR in `dtype`; returns the
  folder and its tensors."""
  folder = tmp_path / "half"
  shutil.copytree(SOURCE, folder)
  stored = load_file(f"{SOURCE}/model.safetensors")
  tensors = {name: value if name == FLOAT32_TENSOR else value.astype(dtype)
             for name, value in stored.items()}
  save_file(tensors, f"{folder}/model.safetensors", metadata={"format": "pt"})
  return folder, tensors


def checkpoint_dtypes(directory):
  reader = tf.train.load_checkpoint(f"{directory}/bert_model.ckpt")
  return reader.get_variable_to_dtype_map()


def data_size(directory):
  return os.path.getsize(
      f"{directory}/bert_model.ckpt.data-00000-of-00001")


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_half_precision_round_trips_in_its_own_dtypes(tmp_path, dtype):
  folder, tensors = half_precision_copy(tmp_path, dtype)
  original, back = tmp_path / "original", tmp_path / "back"
  conversion.convert(str(folder), str(original), conversion.ORIGINAL)
  stored = checkpoint_dtypes(original)
  assert stored.pop("global_step") == tf.int64
  assert stored.pop("output_bias") == tf.float32
  assert set(stored.values()) == {tf.as_dtype(dtype)}
  conversion.convert(str(original), str(back), conversion.HUGGINGFACE)
  written = load_file(f"{back}/model.safetensors")
  assert sorted(written) == sorted(tensors)
  for name, value in tensors.items():
    assert written[name].dtype == value.dtype, name
    np.testing.assert_array_equal(written[name], value, err_msg=name)
  assert os.path.getsize(f"{back}/model.safetensors") < 0.55 * \
      os.path.getsize(f"{SOURCE}/model.safetensors")
  # A float32 model loads it, cast.
  model = bert_tf.load_pretrained(str(original)).model
  embeddings = model.encoder.embeddings.word_embeddings
  assert embeddings.dtype == "float32"
  np.testing.assert_array_equal(
      embeddings.numpy(),
      tensors["bert.embeddings.word_embeddings.weight"].astype(np.float32))


def test_a_dtype_asked_for_is_every_tensors(tmp_path):
  folder, _ = half_precision_copy(tmp_path, np.float16)
  kept, widened = tmp_path / "kept", tmp_path / "float32"
  conversion.convert(str(folder), str(kept), conversion.ORIGINAL)
  conversion.convert(str(folder), str(widened), conversion.ORIGINAL,
                     dtype="float32")
  stored = checkpoint_dtypes(widened)
  assert stored.pop("global_step") == tf.int64
  assert set(stored.values()) == {tf.float32}
  assert data_size(widened) > 1.9 * data_size(kept)
  narrowed = tmp_path / "bfloat16"
  conversion.convert(str(folder), str(narrowed), conversion.HUGGINGFACE,
                     dtype="bfloat16")
  assert {value.dtype for value in load_file(
      f"{narrowed}/model.safetensors").values()} == {
          np.dtype(ml_dtypes.bfloat16)}
  with pytest.raises(ValueError, match=r"^--dtype=float64: expected one of "
                     r"float32, float16, bfloat16$"):
    conversion.convert(str(folder), str(tmp_path / "no"),
                       conversion.HUGGINGFACE, dtype="float64")


def test_the_huggingface_name_of_the_tanh_gelu_comes_back(tmp_path):
  folder = tmp_path / "tanh"
  shutil.copytree(SOURCE, folder)
  values = json.loads((folder / "config.json").read_text())
  values["hidden_act"] = "gelu_pytorch_tanh"
  (folder / "config.json").write_text(json.dumps(values))
  original, back, direct = (tmp_path / name
                            for name in ("original", "back", "direct"))
  conversion.convert(str(folder), str(original), conversion.ORIGINAL)
  assert json.loads((original / "bert_config.json").read_text())[
      "hidden_act"] == "gelu"  # the only name the original knows for it
  conversion.convert(str(original), str(back), conversion.HUGGINGFACE)
  conversion.convert(str(folder), str(direct), conversion.HUGGINGFACE)
  for written in (back, direct):
    assert json.loads((written / "config.json").read_text())[
        "hidden_act"] == "gelu_pytorch_tanh"
