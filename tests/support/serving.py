"""The checks every task's export gets: its SavedModel served in a process
that never imports bert_tf, loaded both as TensorFlow 2 loads it and as TF
Serving does (a TF1 session from the SavedModel bundle), and
serving_default made of core TensorFlow ops only (stock TF Serving has no
other). Interpreters named in BERT_TF_ALSO_SERVE_WITH (os.pathsep-separated:
other virtual environments' python, with other TensorFlow versions) must
load every export and answer as this one does: the TensorFlow 2.21 leg of
.ci/run names the 2.20 environment's, so that exports made on 2.21 are
tested loading on 2.20."""

import glob
import json
import os
import re
import subprocess
import sys

import numpy as np

from tests.support.helpers import PROJECT_DIR, SUPPORT_DIR

# The program that loads and queries an export, in a process of its own.
SERVE_SCRIPT = os.path.join(SUPPORT_DIR, "serve_saved_model.py")
OTHER_SERVERS = [python for python in os.environ.get(
    "BERT_TF_ALSO_SERVE_WITH", "").split(os.pathsep) if python]



def serve_export(version_dir, requests, work_dir, rest_bodies=()):
  """Answers requests with the export in a process without bert_tf.

  Args:
    version_dir: an export's version directory (<export_dir>/<n>).
    requests: {signature name: {input name: numpy array or list}}.
    work_dir: where the request file is written (the process runs there,
      away from the project, so bert_tf cannot be imported by accident).
    rest_bodies: REST predict bodies (the documentation's) to answer as well.

  Returns:
    (sorted signature names, {signature: {output name: nested lists}}),
    after checking that serving_default uses core ops only, that bert_tf
    was never imported, that serving_default refuses the request with
    an id of -1 or 2**30 in input_ids, then segment_ids, naming the field,
    that every input sent as a scalar, with one more axis or (beside
    others) one fewer in its last axis is refused naming a field,
    that each request sent through TF Serving's REST API in the row and
    the columnar format gets the same answer, that a request missing a
    field or of the wrong type gets an error, one of an empty batch of
    texts empty outputs, and
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
    assert_same_answers(other["documented"], answer["documented"], where)
  if rest_bodies:
    return answer["signatures"], answer["outputs"], answer["documented"]
  return answer["signatures"], answer["outputs"]


def _checked_answer(python, version_dir, requests_path, requests, work_dir,
                    rest_bodies):
  """The answer of serve_saved_model.py run by `python`, checked as
  serve_export says."""
  result = subprocess.run(
      [python, SERVE_SCRIPT, str(version_dir), requests_path,
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
    # An empty batch of [batch] strings reaches the signature, which
    # answers it with empty outputs; any other input is then of the wrong
    # shape.
    text_batch = all(np.asarray(value).ndim == 1
                     and np.asarray(value).dtype.kind == "U"
                     for value in requests[signature].values())
    for kind, refused in rest["malformed"].items():
      if kind == "empty batch" and text_batch:
        empty = refused["outputs"]
        assert all(value == [] for value in (
            empty.values() if isinstance(empty, dict) else [empty])), (
                signature, refused)
      else:
        assert list(refused) == ["error"], (signature, kind, refused)
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


def documented_examples(model_name):
  """The documentation's REST requests to a model (README.md and docs/),
  each with the answer shown after it (None where none is): [(body,
  answer)]. A request is a `curl ... /v1/models/<model_name>:predict -d
  '<body>'` in a sh block; its answer, the json block right after that
  block."""
  examples = []
  for path in [os.path.join(PROJECT_DIR, "README.md"),
               *sorted(glob.glob(os.path.join(PROJECT_DIR, "docs", "*.md")))]:
    with open(path, encoding="utf-8") as f:
      blocks = re.findall(r"```(\w*)\n(.*?)```", f.read(), re.DOTALL)
    for (kind, text), (next_kind, next_text) in zip(
        blocks, blocks[1:] + [("", "")]):
      requests = re.findall(
          rf"/v1/models/{model_name}:predict -d '(.*?)'", text, re.DOTALL)
      for number, body in enumerate(requests, 1):
        answer = next_text if (kind == "sh" and next_kind == "json"
                               and number == len(requests)) else None
        examples.append((json.loads(body),
                         None if answer is None else json.loads(answer)))
  assert examples, f"the documentation has no request to {model_name}"
  return examples


def assert_shaped_like(shown, got, where="answer"):
  """`got` has the documentation's answer's keys, list lengths and kinds of
  values (the values come from a model the documentation does not have)."""
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


def documented_requests(model_name):
  """The documentation's REST request bodies to model_name (for serve_export)."""
  return [body for body, _ in documented_examples(model_name)]


def assert_answered_as_documented(model_name, answers):
  """serve_export's answers to documented_requests(model_name): no error, and
  the documentation's shape where it shows one."""
  for (body, shown), answer in zip(documented_examples(model_name), answers):
    assert "error" not in answer, (body, answer)
    if shown is not None:
      assert_shaped_like(shown, answer, json.dumps(answer)[:3000])


def serve_as_documented(version_dir, requests, work_dir, model_name):
  """serve_export, and the documentation's requests to model_name answered as
  the documentation shows; returns (signatures, outputs)."""
  signatures, outputs, answers = serve_export(
      version_dir, requests, work_dir, documented_requests(model_name))
  assert_answered_as_documented(model_name, answers)
  return signatures, outputs
