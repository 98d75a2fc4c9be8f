"""The checks every task's export gets: its SavedModel served in a process
that never imports bert_tf, loaded both as TensorFlow 2 loads it and as TF
Serving does (a TF1 session from the SavedModel bundle), and
serving_default made of core TensorFlow ops only (stock TF Serving has no
other). Interpreters named in BERT_TF_ALSO_SERVE_WITH (os.pathsep-separated:
other virtual environments' python, with other TensorFlow versions) must
load every export and answer as this one does: the TensorFlow 2.21 leg of
.ci/run names the 2.20 environment's, so that exports made on 2.21 are
tested loading on 2.20."""

import json
import os
import re
import subprocess
import sys
import textwrap

import numpy as np

from tests.helpers import PROJECT_DIR

OTHER_SERVERS = [python for python in os.environ.get(
    "BERT_TF_ALSO_SERVE_WITH", "").split(os.pathsep) if python]

_SERVE = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tensorflow as tf
    from tensorflow.core.protobuf import saved_model_pb2
    from tensorflow.python.framework import op_def_registry

    export_dir, requests_path, tests_dir = sys.argv[1:4]
    rest_bodies = json.loads(sys.argv[4])
    # serving_default must need no tensorflow_text op: check before loading
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
    unregistered = sorted(op for op in ops if op_def_registry.get(op) is None)
    imported_bert_tf = "bert_tf" in sys.modules
    # saved_model_cli show --all, as its command line runs it (it reads the
    # SavedModel without TensorFlow Text's ops).
    import contextlib, io, runpy
    listing = io.StringIO()
    sys.argv = ["saved_model_cli", "show", "--dir", export_dir, "--all"]
    with contextlib.redirect_stdout(listing):
      try:
        runpy.run_module("tensorflow.python.tools.saved_model_cli",
                         run_name="__main__")
      except SystemExit as stop:
        assert not stop.code, stop.code

    import tensorflow_text  # the raw-text signatures' ops
    loaded = tf.saved_model.load(export_dir)
    arrays = np.load(requests_path, allow_pickle=False)
    requests = {}
    for key in arrays.files:
      signature, name = key.split("/")
      requests.setdefault(signature, {})[name] = tf.constant(arrays[key])
    outputs = {
        signature: {name: (np.char.decode(value.numpy().astype(bytes),
                                          "utf-8").tolist()
                           if value.dtype == tf.string
                           else value.numpy().tolist())
                    for name, value in
                    loaded.signatures[signature](**inputs).items()}
        for signature, inputs in requests.items()}
    # As TF Serving loads it: a TF1 session from the SavedModel bundle.
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
    # Ids outside the embedding tables: each request must be refused.
    refusals = {}
    ids_request = requests.get("serving_default", {})
    for name, value in (("input_ids", -1), ("input_ids", 2**30),
                        ("segment_ids", -1), ("segment_ids", 2**30)):
      if name not in ids_request:
        continue
      bad = ids_request[name].numpy().copy()
      bad.flat[-1] = value
      try:
        loaded.signatures["serving_default"](
            **{**ids_request, name: tf.constant(bad)})
        refusals[f"{name}={value}"] = None
      except tf.errors.InvalidArgumentError as error:
        refusals[f"{name}={value}"] = next(
            (line for line in error.message.splitlines()
             if "assertion failed" in line), error.message)
    # Inputs of the wrong shape (a loaded signature runs on any), each
    # refused naming a field.
    shape_refusals = {}
    for signature, inputs in requests.items():
      for name, value in inputs.items():
        array = value.numpy()
        wrong = {"scalar": array.flat[0], "one more axis": array[..., None]}
        if len(inputs) > 1 and array.shape[-1] > 1:
          wrong["one fewer in the last axis"] = array[..., :-1]
        for kind, bad in wrong.items():
          try:
            loaded.signatures[signature](**{**inputs,
                                            name: tf.constant(bad)})
            message = None
          except tf.errors.InvalidArgumentError as error:
            message = next((line for line in error.message.splitlines()
                            if "assertion failed" in line), error.message)
          shape_refusals[f"{signature} {name} {kind}"] = message
    # The same requests through the REST API, in both formats; then
    # malformed ones, each refused with an error; then the given bodies.
    sys.path.insert(0, tests_dir)
    import rest_api
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
      rest[signature] = {
          "instances": rest_api.predict(loaded.signatures, {
              "signature_name": signature, "instances": rows}),
          "inputs": rest_api.predict(loaded.signatures, {
              "signature_name": signature, "inputs": columns}),
          "malformed": {kind: rest_api.predict(loaded.signatures, {
              "signature_name": signature, **body}) for kind, body in (
                  ("missing field", {"instances": [
                      {name: value for name, value in row.items()
                       if name != first} for row in rows]}),
                  ("wrong type", {"inputs": {**columns, first: wrong}}),
                  ("no instances", {"instances": []}),
                  ("empty batch", {"inputs": {name: [] for name in
                                              columns}}))}}
    readme = [rest_api.predict(loaded.signatures, body)
              for body in rest_bodies]
    print(json.dumps({"tensorflow": tf.__version__,
                      "unregistered": unregistered,
                      "listing": listing.getvalue(),
                      "rest": rest, "readme": readme,
                      "signatures": sorted(loaded.signatures),
                      "imported_bert_tf": imported_bert_tf or
                                          "bert_tf" in sys.modules,
                      "outputs": outputs, "refusals": refusals,
                      "shape_refusals": shape_refusals}))
    """)


def serve_export(version_dir, requests, work_dir, rest_bodies=()):
  """Answers requests with the export in a process without bert_tf.

  Args:
    version_dir: an export's version directory (<export_dir>/<n>).
    requests: {signature name: {input name: numpy array or list}}.
    work_dir: where the request file is written (the process runs there,
      away from the project, so bert_tf cannot be imported by accident).
    rest_bodies: REST predict bodies (the README's) to answer as well.

  Returns:
    (sorted signature names, {signature: {output name: nested lists}}),
    after checking that serving_default uses core ops only, that bert_tf
    was never imported, that serving_default refuses the request with
    an id of -1 or 2**30 in input_ids, then segment_ids, naming the field,
    that every input sent as a scalar, with one more axis or (beside
    others) one fewer in its last axis is refused naming a field,
    that each request sent through TF Serving's REST API in the row and
    the columnar format gets the same answer, that a request missing a
    field, of the wrong type or of an empty batch gets an error, and
    that `saved_model_cli show --all` lists the signatures. With
    rest_bodies, a third value: their answers. Each interpreter in
    OTHER_SERVERS passes the same checks and answers the same.
  """
  path = os.path.join(work_dir, "requests.npz")
  np.savez(path, **{f"{signature}/{name}": np.asarray(value)
                    for signature, inputs in requests.items()
                    for name, value in inputs.items()})
  answer = _checked_answer(sys.executable, version_dir, path, requests,
                           work_dir, rest_bodies)
  for python in OTHER_SERVERS:
    other = _checked_answer(python, version_dir, path, requests, work_dir,
                            rest_bodies)
    where = f"TensorFlow {other['tensorflow']} ({python})"
    assert other["signatures"] == answer["signatures"], where
    assert_same_answers(other["outputs"], answer["outputs"], where)
    assert_same_answers(other["readme"], answer["readme"], where)
  if rest_bodies:
    return answer["signatures"], answer["outputs"], answer["readme"]
  return answer["signatures"], answer["outputs"]


def _checked_answer(python, version_dir, requests_path, requests, work_dir,
                    rest_bodies):
  """The _SERVE process's answer with `python`, checked as serve_export
  says."""
  result = subprocess.run(
      [python, "-c", _SERVE, str(version_dir), requests_path,
       os.path.dirname(os.path.abspath(__file__)),
       json.dumps(list(rest_bodies))],
      capture_output=True, text=True, timeout=300, check=False,
      cwd=str(work_dir))
  assert result.returncode == 0, (python, result.stderr[-3000:])
  answer = json.loads(result.stdout.strip().splitlines()[-1])
  assert answer["unregistered"] == [], answer["unregistered"]
  assert not answer["imported_bert_tf"]
  for request, message in answer["refusals"].items():
    assert message and f"{request.split('=')[0]}: ids must be" in message, (
        request, message)
  if "serving_default" in requests:
    assert len(answer["refusals"]) == 4, answer["refusals"]
  for request, message in answer["shape_refusals"].items():
    # The field itself, or one whose size must equal the field's.
    name = request.split()[1]
    assert message and re.search(rf"\b{name}: must be \[|as in {name}$",
                                 message.rstrip("]")), (request, message)
  for signature, rest in answer["rest"].items():
    outputs = answer["outputs"][signature]
    assert rest["inputs"] == {"outputs": outputs if len(outputs) > 1 else
                              next(iter(outputs.values()))}, signature
    assert rest["instances"] == {"predictions": [
        {name: value[row] for name, value in outputs.items()}
        if len(outputs) > 1 else next(iter(outputs.values()))[row]
        for row in range(len(next(iter(outputs.values()))))]}, signature
    for kind, refused in rest["malformed"].items():
      assert list(refused) == ["error"], (signature, kind, refused)
    # An empty batch of [batch] strings reaches the signature, which
    # refuses it.
    if all(np.asarray(value).ndim == 1 and np.asarray(value).dtype.kind == "U"
           for value in requests[signature].values()):
      assert "the batch is empty" in rest["malformed"]["empty batch"][
          "error"], rest["malformed"]
  listed = re.findall(r"signature_def\['(\w+)'\]", answer["listing"])
  assert sorted(set(listed) - {"__saved_model_init_op"}) == \
      answer["signatures"], answer["listing"][-3000:]
  return answer


def assert_same_answers(got, expected, where, path="answer"):
  """Equal nested answers: the same keys, lengths and strings, numbers
  within 1e-5 (another TensorFlow may round differently)."""
  if isinstance(expected, dict):
    assert isinstance(got, dict) and sorted(got) == sorted(expected), (
        where, path)
    for key in expected:
      assert_same_answers(got[key], expected[key], where, f"{path}.{key}")
  elif isinstance(expected, list):
    assert isinstance(got, list) and len(got) == len(expected), (where, path)
    for index, (item, value) in enumerate(zip(got, expected)):
      assert_same_answers(item, value, where, f"{path}[{index}]")
  elif isinstance(expected, float) or isinstance(got, float):
    assert abs(got - expected) <= 1e-5 + 1e-5 * abs(expected), (
        where, path, got, expected)
  else:
    assert got == expected, (where, path, got, expected)


def readme_examples(model_name):
  """The README's REST requests to a model, each with the answer shown
  after it (None where none is): [(body, answer)]. A request is a `curl
  ... /v1/models/<model_name>:predict -d '<body>'` in a sh block; its
  answer, the json block right after that block."""
  with open(os.path.join(PROJECT_DIR, "README.md"), encoding="utf-8") as f:
    blocks = re.findall(r"```(\w*)\n(.*?)```", f.read(), re.DOTALL)
  examples = []
  for (kind, text), (next_kind, next_text) in zip(
      blocks, blocks[1:] + [("", "")]):
    requests = re.findall(
        rf"/v1/models/{model_name}:predict -d '(.*?)'", text, re.DOTALL)
    for number, body in enumerate(requests, 1):
      answer = next_text if (kind == "sh" and next_kind == "json"
                             and number == len(requests)) else None
      examples.append((json.loads(body),
                       None if answer is None else json.loads(answer)))
  assert examples, f"the README has no request to {model_name}"
  return examples


def assert_shaped_like(shown, got, where="answer"):
  """`got` has the README's answer's keys, list lengths and kinds of
  values (the values come from a model the README does not have)."""
  if isinstance(shown, dict):
    assert isinstance(got, dict) and sorted(got) == sorted(shown), (
        where, got)
    for key in shown:
      assert_shaped_like(shown[key], got[key], f"{where}.{key}")
  elif isinstance(shown, list):
    assert isinstance(got, list) and len(got) == len(shown), (where, got)
    for index, (item, value) in enumerate(zip(shown, got)):
      assert_shaped_like(item, value, f"{where}[{index}]")
  else:
    assert type(got) is type(shown), (where, shown, got)


def readme_requests(model_name):
  """The README's REST request bodies to model_name (for serve_export)."""
  return [body for body, _ in readme_examples(model_name)]


def assert_answered_as_the_readme_shows(model_name, answers):
  """serve_export's answers to readme_requests(model_name): no error, and
  the README's shape where it shows one."""
  for (body, shown), answer in zip(readme_examples(model_name), answers):
    assert "error" not in answer, (body, answer)
    if shown is not None:
      assert_shaped_like(shown, answer, json.dumps(answer)[:3000])


def serve_as_documented(version_dir, requests, work_dir, model_name):
  """serve_export, and the README's requests to model_name answered as
  the README shows; returns (signatures, outputs)."""
  signatures, outputs, answers = serve_export(
      version_dir, requests, work_dir, readme_requests(model_name))
  assert_answered_as_the_readme_shows(model_name, answers)
  return signatures, outputs
