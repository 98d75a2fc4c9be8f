import os

import pytest

from bert_tf.files import atomic_outputs, storage


def test_a_full_disk_in_safetensors_is_named(tmp_path):
  """safetensors' SafetensorError is no OSError: its message tells a full
  disk; a file inside the temporary of what is written names that."""
  from safetensors import SafetensorError
  output = str(tmp_path / "hf")
  with pytest.raises(storage.DiskFullError, match=(
      f"^no space left on device writing {output}$")):
    with atomic_outputs.held_temporary(output, directory=True):
      raise SafetensorError("Error while serializing: I/O error: No space "
                            "left on device (os error 28)")
  with pytest.raises(storage.DiskFullError, match=(
      f"^no space left on device writing {output}$")):
    with atomic_outputs.held_temporary(output, directory=True) as temporary:
      with atomic_outputs.held_temporary(f"{temporary}/model.ckpt"):
        raise OSError(28, "No space left on device")
  with pytest.raises(SafetensorError):
    with storage.naming_full_disk(output):
      raise SafetensorError("Error while deserializing header")
  assert os.listdir(tmp_path) == []
