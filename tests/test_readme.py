"""The README's set-up commands are what users and CI run: keep them in step."""

import os
import re

from tests.helpers import PROJECT_DIR


def readme_commands():
  with open(os.path.join(PROJECT_DIR, "README.md"), encoding="utf-8") as reader:
    return re.findall(r"```sh\n(.*?)\n```", reader.read(), re.S)


def test_ci_runs_the_readme_test_command():
  with open(os.path.join(PROJECT_DIR, ".ci", "run"), encoding="utf-8") as reader:
    ci_lines = reader.read().splitlines()
  test_command = readme_commands()[1]
  assert "pytest" in test_command
  assert ci_lines[-1] == test_command


def test_readme_opens_with_the_two_commands():
  demo, tests = readme_commands()[:2]
  assert demo.startswith("python3 -m venv .venv") and "demo.py" in demo
  assert tests.startswith("python3 -m venv .venv")
