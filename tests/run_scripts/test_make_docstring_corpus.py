import inspect
import json
import os
import subprocess
import sys
import textwrap

from tests.support.helpers import (PROJECT_DIR, assert_fails_in_one_line,
                           run_script_cases)

SCRIPT = os.path.join(PROJECT_DIR, "run_scripts", "make_docstring_corpus.py")


def make_corpus(output_file, seed, modules="json,textwrap"):
  subprocess.run([sys.executable, SCRIPT, f"--output_file={output_file}",
                  f"--modules={modules}"],
                 env={**os.environ, "PYTHONHASHSEED": str(seed)},
                 check=True, capture_output=True, timeout=120)
  with open(output_file, encoding="utf-8") as reader:
    return reader.read()


def test_one_document_per_module_one_sentence_per_line(tmp_path):
  text = make_corpus(tmp_path / "corpus.txt", seed=0)
  documents = text.rstrip("\n").split("\n\n")
  assert len(documents) == 2
  for document, module in zip(documents, (json, textwrap)):
    lines = document.split("\n")
    assert all(line.strip() == line and line for line in lines)
    assert lines[0].split()[:3] == inspect.getdoc(module).split()[:3]
    assert not any(line.startswith(">>>") for line in lines)
  # A function's one-line summary is a sentence of its own.
  summary = inspect.getdoc(textwrap.dedent).splitlines()[0]
  assert summary in documents[1].split("\n")


def test_same_interpreter_gives_the_same_file(tmp_path):
  first = make_corpus(tmp_path / "a.txt", seed=1, modules="collections,re")
  second = make_corpus(tmp_path / "b.txt", seed=2, modules="collections,re")
  assert first == second and len(first) > 1000


def test_bad_flags_fail_in_one_line_before_writing(tmp_path):
  os.mkfifo(tmp_path / "fifo")
  output = tmp_path / "corpus.txt"
  results = run_script_cases("make_docstring_corpus.py", [
      {"output_file": output, "modules": "json,no_such_module"},
      {"output_file": tmp_path / "fifo"},
  ])
  assert_fails_in_one_line(results[0], "make_docstring_corpus",
                           "--modules: there is no module 'no_such_module'")
  assert_fails_in_one_line(results[1], "make_docstring_corpus",
                           "--output_file=.*fifo is a FIFO")
  assert sorted(os.listdir(tmp_path)) == ["fifo"]
