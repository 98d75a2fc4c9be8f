"""safetensors files read through the safetensors package's numpy API
(nothing is unpickled, torch is never imported), each failure one line
naming the file."""


def tensor_headers(path):
  """{name: (dtype, shape)} from a safetensors file's header, no tensor
  read."""
  from safetensors import safe_open  # pylint: disable=g-import-not-at-top
  try:
    with safe_open(path, framework="numpy") as weights:
      return {name: (weights.get_slice(name).get_dtype(),
                     list(weights.get_slice(name).get_shape()))
              for name in weights.keys()}
  except Exception as error:  # safetensors raises its own SafetensorError
    raise ValueError(f"{path}: not a readable safetensors file "
                     f"({error})") from None


def read_tensor(path, name, named=None):
  """The tensor `name` of a safetensors file, as numpy; `named` is how a
  failure names it (by default `name`)."""
  from safetensors import safe_open  # pylint: disable=g-import-not-at-top
  try:
    with safe_open(path, framework="numpy") as weights:
      return weights.get_tensor(name)
  except Exception as error:  # safetensors raises its own SafetensorError
    raise ValueError(f"{path}: cannot read tensor {named or name} "
                     f"({error})") from None
