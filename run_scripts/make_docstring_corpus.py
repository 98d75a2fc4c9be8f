"""Writes a pretraining corpus from the docstrings of Python's standard library.

Text the project can make offline and ship nothing of: one document per
module (its docstring, then those of its public functions, classes and their
methods, in sorted order), one sentence per line, a blank line between
documents: the input format of create_pretraining_data. The same interpreter gives the same
file; docstrings change between Python versions, so vocab/README.md records
the version the shipped vocabulary was built with.

    python run_scripts/make_docstring_corpus.py \
        --output_file=demo_output/docstring_corpus.txt
"""

import importlib
import inspect
import re
import sys
import time

from absl import flags, logging

import program
from bert_tf.files import atomic_outputs, output_paths

# Pure-Python or well-documented modules, present on every platform from
# Python 3.10 on, importable without side effects or deprecation warnings.
MODULES = (
    "abc", "argparse", "base64", "bisect", "calendar", "collections",
    "configparser", "contextlib", "copy", "csv", "dataclasses", "datetime",
    "decimal", "difflib", "enum", "fnmatch", "fractions", "functools",
    "getopt", "glob", "gzip", "heapq", "hmac", "html", "inspect", "ipaddress",
    "itertools", "json", "logging", "math", "numbers", "operator", "os",
    "pathlib", "pickle", "pprint", "queue", "random", "re", "sched",
    "secrets", "shlex", "shutil", "statistics", "string", "struct",
    "subprocess", "tarfile", "tempfile", "textwrap", "threading", "timeit",
    "tokenize", "traceback", "typing", "unittest", "urllib.parse", "uuid",
    "warnings", "weakref", "zipfile")

flags.DEFINE_string("output_file", None, "The corpus text file to write.")
flags.DEFINE_list("modules", list(MODULES),
                  "Standard library modules to read, in this order.")
FLAGS = flags.FLAGS

# A sentence ends at . ! or ? followed by space and a capital, digit or quote.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(`])")


def sentences(docstring):
  """Sentences of a docstring: paragraphs joined, doctest lines dropped."""
  result = []
  for paragraph in re.split(r"\n\s*\n", docstring):
    lines = [line.strip() for line in paragraph.splitlines()]
    text = " ".join(line for line in lines
                    if line and not line.startswith((">>>", "...")))
    result.extend(sentence for sentence in _SENTENCE_END.split(text)
                  if sentence)
  return result


def public_objects(module):
  """Functions and classes the module defines or re-exports from its own
  submodules, by sorted public name."""
  names = getattr(module, "__all__", None) or [
      name for name in dir(module) if not name.startswith("_")]
  for name in sorted(set(names)):
    obj = getattr(module, name, None)
    if not (inspect.isclass(obj) or inspect.isroutine(obj)):
      continue
    owner = getattr(obj, "__module__", None) or ""
    if owner == module.__name__ or owner.startswith(module.__name__ + "."):
      yield obj


def public_methods(cls):
  """Routines a class defines itself (not inherited), by sorted public name."""
  for name in sorted(vars(cls)):
    obj = getattr(cls, name, None)
    if not name.startswith("_") and inspect.isroutine(obj):
      yield obj


def module_document(module, seen):
  """The module's sentences; docstrings already in `seen` (inherited or
  aliased) are skipped so that no text repeats."""
  documented = [module]
  for obj in public_objects(module):
    documented.append(obj)
    if inspect.isclass(obj):
      documented.extend(public_methods(obj))
  document = []
  for obj in documented:
    docstring = inspect.getdoc(obj)
    if not docstring or docstring in seen:
      continue
    seen.add(docstring)
    document.extend(sentences(docstring))
  return document


def import_module(name):
  try:
    return importlib.import_module(name)
  except ImportError:
    raise ValueError(f"--modules: there is no module {name!r}") from None


def main(_):
  start = time.time()
  output_paths.check_outputs(outputs=[("--output_file", FLAGS.output_file)])
  modules = [import_module(name) for name in FLAGS.modules]
  seen = set()
  documents = []
  for module in modules:
    document = module_document(module, seen)
    if document:
      documents.append(document)
  text = "\n\n".join("\n".join(document) for document in documents) + "\n"
  with atomic_outputs.atomic_write(FLAGS.output_file) as writer:
    writer.write(text)
  logging.info("Wrote %d documents, %d sentences from Python %s to %s in "
               "%.1f s", len(documents), sum(map(len, documents)),
               sys.version.split()[0], FLAGS.output_file, time.time() - start)


if __name__ == "__main__":
  program.run(main, required_flags=["output_file"])
