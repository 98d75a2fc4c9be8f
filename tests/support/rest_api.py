"""TF Serving's REST predict API, as its model server decodes a request
and encodes the answer (tensorflow_serving/util/json_tensor.cc), around a
loaded SavedModel's signatures: the tests send the README's request bodies
and each export's requests in both of its formats through it.

Row format: {"signature_name": ..., "instances": [{input: value}, ...]}
(one object per batch row; a bare value per row when the signature has
one input) -> {"predictions": [{output: value}, ...]} (bare values when it
has one output). Columnar: {"inputs": {input: batched value}} (or a bare
batched value) -> {"outputs": {output: batched value}} (or a bare one).
A string is a JSON string or {"b64": base64}; an error is
{"error": message}, as the server answers with HTTP 400. Imports neither
bert_tf nor tensorflow_text, so that it runs beside an export as a server
would.
"""

import base64

import numpy as np
import tensorflow as tf


class RequestError(ValueError):
  """What the model server refuses before the model runs."""


def predict(signatures, body):
  """The model server's answer (a JSON-ready dict) to a predict body."""
  try:
    name = body.get("signature_name", "serving_default")
    if name not in signatures:
      raise RequestError(f"Serving signature name: \"{name}\" not found in "
                         f"signature def")
    function = signatures[name]
    specs = function.structured_input_signature[1]
    if "instances" in body:
      inputs = _rows_to_columns(body["instances"], specs)
      row_format = True
    elif "inputs" in body:
      inputs = body["inputs"]
      if not isinstance(inputs, dict):
        inputs = _only_input(specs, inputs)
      row_format = False
    else:
      raise RequestError("Missing 'inputs' or 'instances' key")
    missing = sorted(set(specs) - set(inputs))
    extra = sorted(set(inputs) - set(specs))
    if missing or extra:
      raise RequestError(f"input mismatch: missing {missing}, unexpected "
                         f"{extra}")
    tensors = {key: _tensor(key, value, specs[key])
               for key, value in inputs.items()}
    outputs = {key: value.numpy() for key, value in
               function(**tensors).items()}
  except RequestError as error:
    return {"error": str(error)}
  except tf.errors.OpError as error:
    return {"error": error.message}
  return _answer(outputs, row_format)


def _only_input(specs, value):
  if len(specs) != 1:
    raise RequestError("a bare value is only for a signature of one input")
  return {next(iter(specs)): value}


def _rows_to_columns(instances, specs):
  if not isinstance(instances, list) or not instances:
    raise RequestError("Expecting 'instances' to be a non-empty list")
  if not all(isinstance(row, dict) for row in instances):
    if any(isinstance(row, dict) for row in instances):
      raise RequestError("instances mix objects and values")
    return _only_input(specs, instances)
  keys = set(instances[0])
  if any(set(row) != keys for row in instances):
    raise RequestError("instances do not all have the same named inputs")
  return {key: [row[key] for row in instances] for key in keys}


def _tensor(key, value, spec):
  """A JSON value as a tensor of the input's dtype, or RequestError."""
  if spec.dtype == tf.string:
    array = np.array(_strings(key, value), dtype=object)
  else:
    array = np.array(value)
    if array.size and (array.dtype == object or array.dtype.kind not in
                       "iub" + ("f" if spec.dtype.is_floating else "")):
      raise RequestError(f"{key}: JSON value is not of expected type "
                         f"{spec.dtype.name}")
    array = array.astype(spec.dtype.as_numpy_dtype)
  if not spec.shape.is_compatible_with(array.shape):
    raise RequestError(f"{key}: shape {list(array.shape)} does not match "
                       f"the signature's {spec.shape}")
  return tf.constant(array, spec.dtype)


def _strings(key, value):
  if isinstance(value, list):
    return [_strings(key, item) for item in value]
  if isinstance(value, str):
    return value.encode("utf-8")
  if isinstance(value, dict) and set(value) == {"b64"}:
    return base64.b64decode(value["b64"])
  raise RequestError(f"{key}: JSON value {value!r} is not of expected type "
                     f"string")


def _json(array):
  if array.dtype == object:
    return np.vectorize(lambda item: item.decode("utf-8"), otypes=[object])(
        array).tolist() if array.size else array.tolist()
  return array.tolist()


def _answer(outputs, row_format):
  if not row_format:
    values = {key: _json(value) for key, value in outputs.items()}
    return {"outputs": next(iter(values.values())) if len(values) == 1
            else values}
  sizes = {value.shape[0] if value.ndim else None
           for value in outputs.values()}
  if len(sizes) != 1 or None in sizes:
    return {"error": "Tensor name: ... has inconsistent batch size with "
                     "the other outputs: use the columnar format"}
  rows = [{key: _json(value[row]) if isinstance(value[row], np.ndarray)
           else _json(value[row:row + 1])[0]
           for key, value in outputs.items()} for row in range(sizes.pop())]
  if len(outputs) == 1:
    rows = [next(iter(row.values())) for row in rows]
  return {"predictions": rows}
