"""Runs many command lines of one run script in one process (TensorFlow's
import costs seconds per process): each is parsed by absl afresh and run
through program.call, exactly as program.run runs main.

    python run_cases.py run_scripts/<script>.py < cases.json

Standard input: a JSON list of argument lists. Standard output, last line:
a JSON list of [exit status, error message] in order (helpers.
run_script_cases reads it).
"""

import contextlib
import importlib.util
import io
import json
import os
import sys
import traceback

from absl import flags


def main():
  script, cases = sys.argv[1], json.loads(sys.stdin.read())
  sys.path.insert(0, os.path.dirname(script))
  spec = importlib.util.spec_from_file_location("script_under_test", script)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  import program  # pylint: disable=g-import-not-at-top (the script's dir)
  results = []
  for args in cases:
    flags.FLAGS.unparse_flags()
    sys.argv = [script, *args]
    captured, code = io.StringIO(), 0
    with contextlib.redirect_stderr(captured):
      try:
        program.call(module.main, flags.FLAGS(sys.argv))
      except SystemExit as stop:
        code = stop.code
      except Exception:  # pylint: disable=broad-except (a bug: keep it)
        code, captured = 1, io.StringIO(traceback.format_exc())
    message = code if isinstance(code, str) else captured.getvalue()
    results.append([1 if isinstance(code, str) else (code or 0), message])
  print(json.dumps(results))


if __name__ == "__main__":
  main()
