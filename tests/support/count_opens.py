"""Runs a run script as `python <script> <flags>` would, counting how many
times the process opens one file (Python's audit events "open", which
builtins.open, io.open and os.open all raise); the count is the last line
of stderr: `opens: N`.

Usage: count_opens.py <file to count> <script> [flags...]
"""

import atexit
import os
import runpy
import sys

counted = os.path.realpath(sys.argv[1])
opens = []


def _count(event, arguments):
  if event == "open" and isinstance(arguments[0], (str, bytes, os.PathLike)):
    if os.path.realpath(os.fsdecode(arguments[0])) == counted:
      opens.append(1)


atexit.register(lambda: print(f"opens: {len(opens)}", file=sys.stderr))
sys.addaudithook(_count)
sys.argv = sys.argv[2:]
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))
runpy.run_path(sys.argv[0], run_name="__main__")
