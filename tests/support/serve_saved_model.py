"""Loads an export and answers requests with it, in a process that never
imports bert_tf, as a server would (serving.serve_export runs it, with this
and other TensorFlow versions):

    python serve_saved_model.py <version dir> <requests.npz> '<REST bodies>'

It prints, as its last line, a JSON object: the TensorFlow version, the ops
serving_default needs that core TensorFlow lacks, saved_model_cli's
listing, each signature's outputs (also checked against a TF1 session's, as
TF Serving loads the SavedModel bundle), the refusals of ids outside the
tables and of inputs of the wrong shape, the REST API's answers (rows,
columns, malformed bodies) and the answers to the given REST bodies.
"""

import contextlib
import io
import json
import runpy
import sys

import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2
from tensorflow.python.framework import op_def_registry

import rest_api  # beside this file


def unregistered_ops(export_dir):
  """The ops serving_default calls that core TensorFlow does not register
  (none: stock TF Serving runs it), read before anything is loaded."""
  proto = saved_model_pb2.SavedModel()
  with open(export_dir + "/saved_model.pb", "rb") as reader:
    proto.ParseFromString(reader.read())
  graph = proto.meta_graphs[0]
  functions = {function.signature.name: function
               for function in graph.graph_def.library.function}
  nodes = {node.name: node for node in graph.graph_def.node}

  def called(attrs):
    for value in attrs.values():
      if value.func.name:
        yield value.func.name
      yield from (function.name for function in value.list.func)

  pending = [name for output in
             graph.signature_def["serving_default"].outputs.values()
             for name in called(nodes[output.name.split(":")[0]].attr)]
  ops, seen = set(), set()
  while pending:
    name = pending.pop()
    if name in seen:
      continue
    seen.add(name)
    for node in functions[name].node_def:
      ops.add(node.op)
      pending.extend(called(node.attr))
  return sorted(op for op in ops if op_def_registry.get(op) is None)


def saved_model_cli_listing(export_dir):
  """saved_model_cli show --all, as its command line runs it (it reads the
  SavedModel without TensorFlow Text's ops)."""
  listing = io.StringIO()
  argv, sys.argv = sys.argv, ["saved_model_cli", "show", "--dir", export_dir,
                              "--all"]
  with contextlib.redirect_stdout(listing):
    try:
      runpy.run_module("tensorflow.python.tools.saved_model_cli",
                       run_name="__main__")
    except SystemExit as stop:
      assert not stop.code, stop.code
  sys.argv = argv
  return listing.getvalue()


def read_requests(requests_path):
  """{signature: {input name: tf.constant}} from the npz serve_export
  wrote."""
  arrays = np.load(requests_path, allow_pickle=False)
  requests = {}
  for key in arrays.files:
    signature, name = key.split("/")
    requests.setdefault(signature, {})[name] = tf.constant(arrays[key])
  return requests


def answers(loaded, requests):
  """{signature: {output name: nested lists}} (strings decoded)."""
  return {
      signature: {name: (np.char.decode(value.numpy().astype(bytes),
                                        "utf-8").tolist()
                         if value.dtype == tf.string
                         else value.numpy().tolist())
                  for name, value in
                  loaded.signatures[signature](**inputs).items()}
      for signature, inputs in requests.items()}


def check_tf1_session_answers(export_dir, requests, outputs):
  """As TF Serving loads it, a TF1 session from the SavedModel bundle must
  answer as TensorFlow 2's loader does."""
  v1_outputs = {}
  with tf.Graph().as_default(), tf.compat.v1.Session() as session:
    meta = tf.compat.v1.saved_model.loader.load(session, ["serve"],
                                                export_dir)
    for signature, inputs in requests.items():
      definition = meta.signature_def[signature]
      v1_outputs[signature] = session.run(
          {name: info.name for name, info in definition.outputs.items()},
          {definition.inputs[name].name: value.numpy()
           for name, value in inputs.items()})
  for signature, values in v1_outputs.items():
    for name, value in values.items():
      expected = np.array(outputs[signature][name])
      if value.dtype == object:
        assert np.char.decode(value.astype(bytes), "utf-8").tolist() == \
            outputs[signature][name], (signature, name)
      else:
        np.testing.assert_allclose(value, expected, atol=1e-5,
                                   err_msg=f"{signature} {name}")


def _refusal(call):
  """The assertion line of the error call() raises; None if it answers."""
  try:
    call()
    return None
  except tf.errors.InvalidArgumentError as error:
    return next((line for line in error.message.splitlines()
                 if "assertion failed" in line), error.message)


def id_refusals(loaded, requests):
  """Ids outside the embedding tables: each request must be refused."""
  refusals = {}
  ids_request = requests.get("serving_default", {})
  for name, value in (("input_ids", -1), ("input_ids", 2**30),
                      ("segment_ids", -1), ("segment_ids", 2**30)):
    if name not in ids_request:
      continue
    bad = ids_request[name].numpy().copy()
    bad.flat[-1] = value
    refusals[f"{name}={value}"] = _refusal(
        lambda: loaded.signatures["serving_default"](
            **{**ids_request, name: tf.constant(bad)}))  # pylint: disable=cell-var-from-loop
  return refusals


def shape_refusals(loaded, requests):
  """Inputs of the wrong shape (a loaded signature runs on any), each to be
  refused naming a field."""
  refusals = {}
  for signature, inputs in requests.items():
    for name, value in inputs.items():
      array = value.numpy()
      wrong = {"scalar": array.flat[0], "one more axis": array[..., None]}
      if len(inputs) > 1 and array.shape[-1] > 1:
        wrong["one fewer in the last axis"] = array[..., :-1]
      for kind, bad in wrong.items():
        refusals[f"{signature} {name} {kind}"] = _refusal(
            lambda: loaded.signatures[signature](  # pylint: disable=cell-var-from-loop
                **{**inputs, name: tf.constant(bad)}))
  return refusals


def rest_answers(loaded, requests):
  """The same requests through the REST API, in both formats, then
  malformed ones, each to be refused with an error (but an empty batch of
  texts, which gets empty outputs)."""
  rest = {}
  for signature, inputs in requests.items():
    arrays = {name: (np.char.decode(value.numpy().astype(bytes), "utf-8")
                     if value.dtype == tf.string else value.numpy())
              for name, value in inputs.items()}
    columns = {name: value.tolist() for name, value in arrays.items()}
    rows = [{name: value[row] for name, value in columns.items()}
            for row in range(len(next(iter(arrays.values()))))]
    first = next(iter(columns))
    wrong = (np.zeros(arrays[first].shape, np.int32).tolist()
             if arrays[first].dtype.kind == "U" else
             np.full(arrays[first].shape, "x").tolist())
    malformed = (
        ("missing field", {"instances": [
            {name: value for name, value in row.items() if name != first}
            for row in rows]}),
        ("wrong type", {"inputs": {**columns, first: wrong}}),
        ("no instances", {"instances": []}),
        ("empty batch", {"inputs": {name: [] for name in columns}}))
    rest[signature] = {
        "instances": rest_api.predict(loaded.signatures, {
            "signature_name": signature, "instances": rows}),
        "inputs": rest_api.predict(loaded.signatures, {
            "signature_name": signature, "inputs": columns}),
        "malformed": {kind: rest_api.predict(loaded.signatures, {
            "signature_name": signature, **body})
                      for kind, body in malformed}}
  return rest


def main():
  export_dir, requests_path = sys.argv[1:3]
  rest_bodies = json.loads(sys.argv[3])
  unregistered = unregistered_ops(export_dir)
  imported_bert_tf = "bert_tf" in sys.modules
  listing = saved_model_cli_listing(export_dir)
  import tensorflow_text  # pylint: disable=g-import-not-at-top,unused-import (the raw-text signatures' ops)
  loaded = tf.saved_model.load(export_dir)
  requests = read_requests(requests_path)
  outputs = answers(loaded, requests)
  check_tf1_session_answers(export_dir, requests, outputs)
  print(json.dumps({
      "tensorflow": tf.__version__,
      "unregistered": unregistered,
      "listing": listing,
      "rest": rest_answers(loaded, requests),
      "documented": [rest_api.predict(loaded.signatures, body)
                 for body in rest_bodies],
      "signatures": sorted(loaded.signatures),
      "imported_bert_tf": imported_bert_tf or "bert_tf" in sys.modules,
      "outputs": outputs,
      "refusals": id_refusals(loaded, requests),
      "shape_refusals": shape_refusals(loaded, requests)}))


if __name__ == "__main__":
  main()
