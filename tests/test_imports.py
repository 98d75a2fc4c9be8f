"""Imports inside bert_tf run one way: no module imports one that imports
it back, lazy imports inside functions included."""

import ast
import json
import os
import subprocess
import sys

from tests.support.helpers import PROJECT_DIR, SHARED_DIR

PACKAGE_DIR = os.path.join(PROJECT_DIR, "bert_tf")


def module_files():
  """{module name: file} for every module of the package."""
  modules = {}
  for directory, _, names in os.walk(PACKAGE_DIR):
    for name in names:
      if name.endswith(".py"):
        path = os.path.join(directory, name)
        parts = os.path.relpath(path, PROJECT_DIR)[:-3].split(os.sep)
        if parts[-1] == "__init__":
          parts.pop()
        modules[".".join(parts)] = path
  return modules


def imported(module, path, modules):
  """The bert_tf modules a file imports anywhere in it, with the packages
  whose __init__ each import runs (but its own packages: Python runs those
  first, whatever they import)."""
  names = set()
  for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
    if isinstance(node, ast.Import):
      names.update(alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom) and node.module:
      names.add(node.module)
      names.update(f"{node.module}.{alias.name}" for alias in node.names)
  own_packages = {module.rsplit(".", depth)[0]
                  for depth in range(1, module.count(".") + 1)}
  found = set()
  for name in names:
    parts = name.split(".")
    for end in range(2, len(parts) + 1):  # bert_tf/__init__ imports lazily
      prefix = ".".join(parts[:end])
      if prefix in modules and prefix not in own_packages:
        found.add(prefix)
  return found


def test_imports_run_one_way():
  modules = module_files()
  graph = {name: imported(name, path, modules) - {name}
           for name, path in modules.items()}
  state, path = {}, []

  def visit(name):
    state[name] = "open"
    path.append(name)
    for target in sorted(graph[name]):
      if state.get(target) == "open":
        cycle = path[path.index(target):] + [target]
        raise AssertionError("import cycle: " + " -> ".join(cycle))
      if target not in state:
        visit(target)
    path.pop()
    state[name] = "done"

  for name in sorted(graph):
    if name not in state:
      visit(name)


# The packages below the training loop and the tasks: what a model, its
# compile() and its files need. None imports bert_tf.training or
# bert_tf.tasks.
_BELOW_TRAINING = ("checkpoints", "config", "data", "files", "layers",
                   "models", "objectives", "optimization", "text",
                   "wordpiece")


def test_the_model_layer_imports_neither_training_nor_tasks():
  modules = module_files()
  below = [name for name in modules
           if name.split(".")[1:2] and name.split(".")[1] in _BELOW_TRAINING]
  found = [f"{name} imports {target}" for name in sorted(below)
           for target in sorted(imported(name, modules[name], modules))
           if target.split(".")[1:2] in (["training"], ["tasks"])]
  assert not found, found


# tests/support/run_cases.py's run of a script's cases, then whether
# TensorFlow was imported.
_CASES_THEN_TENSORFLOW = """
import runpy, sys
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
print("tensorflow" in sys.modules)
"""


def refused_without_tensorflow(script, cases):
  """Runs run_scripts/<script>'s cases ([{flag: value}]) in one process;
  asserts each is refused (exit status 1) and TensorFlow never imported.
  Returns their messages."""
  result = subprocess.run(
      [sys.executable, "-c", _CASES_THEN_TENSORFLOW,
       os.path.join(PROJECT_DIR, "tests", "support", "run_cases.py"),
       os.path.join(PROJECT_DIR, "run_scripts", script)],
      input=json.dumps([[f"--{name}={value}" for name, value in case.items()]
                        for case in cases]),
      capture_output=True, text=True, timeout=120, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  *_, outcomes, tensorflow = result.stdout.strip().splitlines()
  outcomes = json.loads(outcomes)
  assert [code for code, _ in outcomes] == [1] * len(cases), outcomes
  assert tensorflow == "False"
  return [message for _, message in outcomes]


def test_convert_checkpoint_refuses_bad_input_before_importing_tensorflow(
    tmp_path):
  source = os.path.join(SHARED_DIR, "reference", "huggingface",
                        "bert_for_sequence_classification")
  config = json.load(open(os.path.join(source, "config.json")))
  for name, change in (("roberta", {"model_type": "roberta"}),
                       ("pickled", {})):
    (tmp_path / name).mkdir()
    (tmp_path / name / "config.json").write_text(json.dumps(
        {**config, **change}))
  (tmp_path / "pickled" / "pytorch_model.bin").write_bytes(b"")
  (tmp_path / "original").mkdir()
  (tmp_path / "original" / "bert_config.json").write_text(
      '{"vocab_size": "many"}')
  (tmp_path / "taken").mkdir()
  (tmp_path / "taken" / "notes.txt").write_text("the user's")
  out = {"output_dir": tmp_path / "out", "output_format": "original"}
  messages = refused_without_tensorflow("convert_checkpoint.py", [
      {"input_dir": source, "output_dir": tmp_path / "taken",
       "output_format": "original"},
      {"input_dir": tmp_path / "missing", **out},
      {"input_dir": tmp_path / "taken", **out},
      {"input_dir": tmp_path / "roberta", **out},
      {"input_dir": tmp_path / "pickled", **out},
      {"input_dir": tmp_path / "original", **out},
      {"input_dir": source, **out, "output_format": "onnx"},
      {"input_dir": source, **out, "dtype": "float64"}])
  for message, expected in zip(messages, [
      "already holds notes.txt", "missing: not a directory",
      "taken: neither a Hugging Face folder", "model_type 'roberta'",
      "pytorch_model.bin: PyTorch pickle weights",
      "field 'vocab_size' must be int", "--output_format",
      "--dtype"]):
    assert expected in message, message


def test_data_tools_refuse_bad_flags_before_importing_tensorflow(tmp_path):
  text, vocab = tmp_path / "text.txt", tmp_path / "vocab.txt"
  text.write_text("One sentence.\nAnother one.\n\nA new document.\n")
  vocab.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\none\n")
  vocab_out = {"input_file": text, "output_file": tmp_path / "out.txt"}
  messages = refused_without_tensorflow("build_vocab.py", [
      {**vocab_out, "vocab_size": 10},
      {**vocab_out, "input_file": tmp_path / "missing.txt"},
      {**vocab_out, "output_file": text}])
  for message, expected in zip(messages, [
      "--vocab_size=10", "missing.txt", "--output_file"]):
    assert expected in message, message
  data_out = {"input_file": text, "vocab_file": vocab,
              "output_file": tmp_path / "out.tfrecord"}
  messages = refused_without_tensorflow("create_pretraining_data.py", [
      {**data_out, "max_seq_length": 3},
      {**data_out, "vocab_file": tmp_path / "missing.txt"},
      {**data_out, "output_file": text},
      data_out])
  for message, expected in zip(messages, [
      "--max_seq_length=3", "missing.txt", "--output_file", "[MASK]"]):
    assert expected in message, message


# The extras' packages, and tf_keras which Model Garden brings: CI's
# TensorFlow 2.21 leg has none of them.
_EXTRAS_PACKAGES = {"official", "tf_keras", "apache_beam", "tf2onnx",
                    "onnxruntime", "ai_edge_litert"}


def test_test_modules_import_the_extras_only_where_they_run():
  """A module-level import of an extra fails collection before the
  model_garden or beam marker can skip the tests."""
  found = []
  for directory, _, names in os.walk(os.path.join(PROJECT_DIR, "tests")):
    for name in (name for name in names if name.endswith(".py")):
      path = os.path.join(directory, name)
      for node in ast.parse(open(path, encoding="utf-8").read()).body:
        if isinstance(node, ast.Import):
          modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
          modules = [node.module]
        else:
          continue
        found += [f"{os.path.relpath(path, PROJECT_DIR)}:{node.lineno} "
                  f"{module}" for module in modules
                  if module.split(".")[0] in _EXTRAS_PACKAGES]
  assert not found, found


def test_run_squad_refuses_bad_lengths_before_importing_tensorflow(tmp_path):
  (message,) = refused_without_tensorflow("run_squad.py", [
      {"output_dir": tmp_path / "out", "do_predict": True,
       "predict_file": tmp_path / "dev.json", "max_seq_length": 64,
       "max_query_length": 64}])
  assert "max_query_length" in message or "max_seq_length" in message, \
      message
