"""DESIGN.md's rule: imports inside bert_tf run one way. No module imports
one that imports it back, lazy imports inside functions included."""

import ast
import os

from tests.support.helpers import PROJECT_DIR

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
