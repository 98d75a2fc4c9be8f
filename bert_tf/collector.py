"""Python's cyclic garbage collector, paused for bulk work.

Tokenising a corpus or making its pretraining instances creates millions of
lists of ints, none of them in a reference cycle; every collection they set
off walks all of them, and all of the process's other objects, for nothing.
"""

import contextlib
import gc


@contextlib.contextmanager
def paused():
  """The collector off inside the block, as it was after it."""
  enabled = gc.isenabled()
  gc.disable()
  try:
    yield
  finally:
    if enabled:
      gc.enable()
