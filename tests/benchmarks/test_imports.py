"""The benchmarks share helpers by importing each other: every name one
imports from another must still be defined there (the benchmarks only run
by hand, so a renamed helper would otherwise go unnoticed)."""

import ast
import os

import pytest

from tests.support.helpers import PROJECT_DIR

BENCHMARKS_DIR = os.path.join(PROJECT_DIR, "benchmarks")
BENCHMARKS = sorted(name[:-3] for name in os.listdir(BENCHMARKS_DIR)
                    if name.endswith(".py"))


def parsed(module):
  with open(os.path.join(BENCHMARKS_DIR, f"{module}.py"),
            encoding="utf-8") as reader:
    return ast.parse(reader.read())


def top_level_names(tree):
  names = set()
  for node in tree.body:
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
      names.add(node.name)
    elif isinstance(node, ast.Assign):
      names.update(target.id for target in node.targets
                   if isinstance(target, ast.Name))
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
      names.update((alias.asname or alias.name).split(".")[0]
                   for alias in node.names)
  return names


def used_attributes(tree, module):
  """Names read as module.name where `import module` was written."""
  return {node.attr for node in ast.walk(tree)
          if isinstance(node, ast.Attribute)
          and isinstance(node.value, ast.Name) and node.value.id == module}


@pytest.mark.parametrize("module", BENCHMARKS)
def test_names_taken_from_other_benchmarks_exist(module):
  tree = parsed(module)
  for node in ast.walk(tree):
    if isinstance(node, ast.ImportFrom) and node.module in BENCHMARKS:
      missing = {alias.name for alias in node.names} - top_level_names(
          parsed(node.module))
      assert not missing, f"{module} imports {missing} from {node.module}"
    elif isinstance(node, ast.Import):
      for alias in node.names:
        if alias.name in BENCHMARKS:
          missing = used_attributes(tree, alias.name) - top_level_names(
              parsed(alias.name))
          assert not missing, f"{module} uses {alias.name}.{missing}"
