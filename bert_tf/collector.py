"""Python's cyclic garbage collector, paused for bulk work.

Tokenising a corpus or making its pretraining instances creates millions of
lists of ints, none of them in a reference cycle; every collection they set
off walks all of them, and all of the process's other objects, for nothing.
"""

import contextlib
import gc


@contextlib.contextmanager
def paused():
  """The collector off inside the block, as it was after it; what the block
  made is then in the oldest generation (_to_oldest_generation)."""
  enabled = gc.isenabled()
  gc.disable()
  try:
    yield
  finally:
    if enabled:
      _to_oldest_generation()
      gc.enable()


def _to_oldest_generation():
  """Moves every object the collector tracks to its oldest generation,
  without a collection. Otherwise the first young collection after the
  block walks all it made (half a second for a 28 MB corpus's ids) only to
  find nothing to free. Garbage cycles among them wait for the next full
  collection, as any old object's do. Skipped where objects are frozen
  (gc.freeze: a server before it forks, say): unfreezing would thaw them."""
  if gc.get_freeze_count() == 0:
    gc.freeze()
    gc.unfreeze()
