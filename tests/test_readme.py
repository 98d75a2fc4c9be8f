"""The README's set-up commands are what users and CI run: keep them in step."""

import os
import re

from tests.support.helpers import PROJECT_DIR


def readme_commands():
  with open(os.path.join(PROJECT_DIR, "README.md"), encoding="utf-8") as reader:
    return re.findall(r"```sh\n(.*?)\n```", reader.read(), re.S)


def ci_lines():
  with open(os.path.join(PROJECT_DIR, ".ci", "run"), encoding="utf-8") as reader:
    return reader.read().splitlines()


def test_ci_runs_the_readme_test_command_and_stops_if_it_fails():
  test_command = readme_commands()[1]
  assert "pytest" in test_command
  assert test_command + " || exit" in ci_lines()


def test_ci_tests_tensorflow_2_21_exports_loading_on_2_20():
  """After the README's command (whose .venv serves), a TensorFlow 2.21
  leg runs the tests with that 2.20 environment as another server."""
  lines = ci_lines()
  first_leg = lines.index(readme_commands()[1] + " || exit")
  script = "\n".join(lines)
  assert '"tensorflow~=2.21.0" "tensorflow-text~=2.21.0"' in script
  assert 'BERT_TF_ALSO_SERVE_WITH="$PWD/.venv/bin/python"' in "\n".join(
      lines[first_leg + 1:])
  assert lines[-1].strip().startswith(".venv-tf2.21/bin/python -m pytest")


def test_readme_opens_with_the_two_commands():
  demo, tests = readme_commands()[:2]
  assert demo.startswith("python3 -m venv .venv") and "demo.py" in demo
  assert tests.startswith("python3 -m venv .venv")
