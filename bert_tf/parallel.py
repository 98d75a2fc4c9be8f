"""Pure-Python work on a long list, on every core, in forks of this process.

Exact tokenisation and record encoding are pure Python and run on one core.
map_chunks cuts a list into chunks that this process and forks of it work
on at once; each fork gets the list and the function (a tokenizer with its
vocabulary and word cache, say) from fork itself, at no cost. Every process
claims the next chunk no process has claimed (a counter they share) until
none is left, so no core waits while another has work. (A process pool's
own queue hands a worker its next chunks before it asks, where no other
process can take them.) The forks' results come back marshalled (Python's
own format for its core types: a tokenizer's lists of ids load in half the
time pickle takes, each int that repeats made once), with Python's garbage
collector paused (paused, below), which would otherwise walk every
object received; so do the entries they added to a cache that the function
fills (a tokenizer's words), so that the next call finds them here and in
every fork it starts.
`apply` is the entry point: in this process alone when a batch is too
small to be worth forking, or where forking is not safe. `started` runs a
function on a list in one fork while this process goes on with other work
(create_pretraining_data serialises one pass while it makes the next).
`pool` is a process pool for independent jobs (create_pretraining_data's
one job per input file). Every process started here dies with this one.
Nothing here imports TensorFlow.
"""

import concurrent.futures
import contextlib
import ctypes
import gc
import itertools
import marshal
import multiprocessing
import os
import signal
import sys


# Chunks per process: enough for the processes to even out their work (a
# fork works more slowly than this process: each page it writes to is
# copied first, and its results must still be sent here), few enough that
# each works on long runs of neighbouring items (a tokenizer's word cache
# learns the words of one part of a corpus). 8 against 2 took a warm pass
# over 28 MB from 1.18-1.21 s to 1.07-1.15 s (16 and 32: no better).
_CHUNKS_PER_PROCESS = 8
# (function, items, chunks, next chunk counter, cache) of the map_chunks
# call in progress, and (function, items) of a `started` call, which forks
# inherit.
_WORK = None
_STARTED = None
# prctl's option: the signal a process gets when its parent dies.
_PR_SET_PDEATHSIG = 1


def can_fork():
  """Whether this process can be forked safely: on Linux (not Windows,
  which cannot, nor macOS, whose system libraries are not safe to fork),
  and before TensorFlow is loaded (its threads and state are not)."""
  return (sys.platform.startswith("linux") and "tensorflow" not in sys.modules
          and "fork" in multiprocessing.get_all_start_methods())


def apply(function, items, processes=None, worth_forking=True, cache=None):
  """function(items), a list of as many results, with the garbage collector
  paused: on `processes` processes (None: one per core) through map_chunks
  when the caller finds the batch worth_forking and can_fork() holds, else
  in this process.

  Args:
    function: takes a list of items, returns a list of as many results,
      each depending on its own item alone, of core types (map_chunks).
    cache: a dict the function adds to as it works, or None (map_chunks).
  """
  processes = processes or os.cpu_count() or 1
  with paused():
    if _forking(processes, items, worth_forking):
      return map_chunks(function, items, processes, cache)
    return function(items)


def _forking(processes, items, worth_forking):
  """Whether `apply` and `started` hand items to forks: more than one
  process and item, a caller that finds it worth it, a process safe to
  fork."""
  return processes > 1 and len(items) > 1 and worth_forking and can_fork()


def map_chunks(function, items, processes, cache=None):
  """function(chunk) for contiguous chunks of items, concatenated: the
  results of [function([item])[0] for item in items], in `processes`
  processes (this one and processes - 1 forks).

  Args:
    function: takes a list of items, returns a list of as many results,
      each of Python's core types (marshal: numbers, strings, bytes and
      lists, tuples, sets and dicts of them).
    items: a list.
    processes: at least 2; can_fork() must hold.
    cache: a dict the function adds to as it works (its entries only
      save work: the results do not depend on them), or None. What the
      forks add is added here: its keys and values of core types too.

  Raises:
    ValueError: a result or cache entry of another type.
  """
  global _WORK
  count = processes * _CHUNKS_PER_PROCESS
  bounds = [len(items) * chunk // count for chunk in range(count + 1)]
  _WORK = (function, items, list(zip(bounds[:-1], bounds[1:])),
           multiprocessing.get_context("fork").Value("i", 0), cache)
  try:
    with _pool(processes - 1, "fork") as forks:
      forks_results = [forks.submit(_work_in_fork)
                       for _ in range(processes - 1)]
      results = _work_on_chunks()
      for future in forks_results:
        fork_results, learned = marshal.loads(future.result())
        results.update(fork_results)
        if cache is not None:
          cache.update(learned)
  except concurrent.futures.process.BrokenProcessPool:
    raise _ended_early() from None
  finally:
    _WORK = None
  return [result for index in range(count) for result in results[index]]


def started(function, items, processes=None, worth_forking=True):
  """function(items), begun now in a fork of this process (which sees items
  as they are now, at no cost) while this one goes on, where `apply` would
  fork (processes, None: one per core); else computed here first. Returns
  a handle whose result() waits for it and returns it.

  (A fork per call: the items cost nothing to hand over, where pickling
  them to a long-lived fork costs this process more than the fork's work
  saves it.)
  """
  global _STARTED
  if not _forking(processes or os.cpu_count() or 1, items, worth_forking):
    future = concurrent.futures.Future()
    future.set_result(function(items))
    return _Started(future)
  fork = _pool(1, "fork")
  _STARTED = (function, items)
  try:
    future = fork.submit(_run_started)  # forks here, with _STARTED set
  finally:
    _STARTED = None
  fork.shutdown(wait=False)
  return _Started(future)


class _Started:
  """What `started` returns: result() is function(items) once done."""

  def __init__(self, future):
    self._future = future

  def result(self):
    """Raises what the function raised; OSError if the fork died."""
    try:
      return self._future.result()
    except concurrent.futures.process.BrokenProcessPool:
      raise _ended_early() from None


def _run_started():
  """In the fork of `started`: its function on its items."""
  function, items = _STARTED
  return function(items)


def _work_in_fork():
  """In a fork: (_work_on_chunks(), the entries it added to the cache),
  marshalled."""
  cache = _WORK[-1]
  size = 0 if cache is None else len(cache)
  results = _work_on_chunks()
  learned = {}
  if cache is not None:
    # Entries are added at the end, or after the cache is emptied when full
    # (then only those past `size` come back: a lost saving, no error).
    start = size if len(cache) >= size else 0
    learned = dict(itertools.islice(cache.items(), start, None))
  return marshal.dumps((results, learned))


def _work_on_chunks():
  """In this process and in each fork: {index: function(chunk)} for the
  chunks this process claims, the next unclaimed one each time."""
  function, items, chunks, next_chunk, _ = _WORK
  results = {}
  while True:
    with next_chunk.get_lock():
      index = next_chunk.value
      next_chunk.value += 1
    if index >= len(chunks):
      return results
    start, end = chunks[index]
    results[index] = function(items[start:end])


def pool(workers, start=None):
  """A concurrent.futures process pool of `workers` processes that die with
  this one: forks of it where can_fork() (each starts with this process's
  memory, at no cost), else fresh interpreters.

  Args:
    start: a function each worker runs first, or None.
  """
  return _pool(workers, "fork" if can_fork() else "spawn", start)


def _pool(workers, method, start=None):
  return concurrent.futures.ProcessPoolExecutor(
      workers, mp_context=multiprocessing.get_context(method),
      initializer=_start_worker, initargs=(os.getpid(), start))


def _start_worker(parent_pid, start):
  """In a new worker: die with the parent, then run `start`."""
  die_with_parent(parent_pid)
  if start is not None:
    start()


def die_with_parent(parent_pid):
  """In a worker process: be killed when the process that started it dies,
  however it dies (kill -9 included), instead of living on blocked on a
  pipe that no one reads. Linux's prctl(PR_SET_PDEATHSIG); elsewhere
  nothing.

  Args:
    parent_pid: the parent's pid, to see whether it died already.
  """
  if not sys.platform.startswith("linux"):
    return
  ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
  if os.getppid() != parent_pid:  # it died before prctl took effect
    os._exit(1)  # pylint: disable=protected-access


def _ended_early():
  """The OSError for a fork that died (the kernel's out-of-memory killer,
  say) before it returned its work."""
  return OSError("a fork of this process ended before its work was done "
                 "(killed, perhaps for lack of memory)")

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
