"""Pure-Python work on a long list, on every core, in forks of this process.

Exact tokenisation and record encoding are pure Python and run on one core.
map_chunks cuts a list into chunks for a fork-context multiprocessing pool
(imap_unordered, one chunk a task): each worker is a fork that holds the
function and the list (a tokenizer with its vocabulary and word cache, say)
from its pool's initializer, inherited at fork and never pickled, and takes
the next chunk as it finishes one. The workers' results come back
marshalled (Python's own format for its core types: a warm pass of a
tokenizer over 28 MB took 1.37x as long with the pool's pickle), with
Python's garbage collector paused (paused, below), which would otherwise
walk every object received (1.69x without); so do the entries they added
to a cache that the function fills (a tokenizer's words), so that the next
call finds them here and in every fork it starts (1.11x without).
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
import functools
import gc
import itertools
import marshal
import multiprocessing
import os
import signal
import sys
import threading
import time


# Chunks per process: enough for the workers to even out their work, few
# enough that each works on long runs of neighbouring items (a tokenizer's
# word cache learns the words of one part of a corpus). A warm pass over
# 28 MB on 2 cores took 1.12x as long with 1, 1.06x with 2.
_CHUNKS_PER_PROCESS = 8
# How often a wait for a worker's result checks that no worker has died (a
# pool replaces a dead worker, and waits for its task for ever), and a
# worker that its parent is alive.
_CHECK_SECONDS = 0.1
# In a worker of map_chunks or `started`: (function, items, cache), from
# the pool's initializer (_hold_work).
_work = None


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
  results of [function([item])[0] for item in items], in `processes` forks
  of this process.

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
    OSError: a fork ended before it returned its work.
  """
  count = processes * _CHUNKS_PER_PROCESS
  bounds = [len(items) * chunk // count for chunk in range(count + 1)]
  results = {}
  with _Forks(processes, function, items, cache) as forks:
    for index, chunk_results, learned in forks.results(
        enumerate(zip(bounds[:-1], bounds[1:]))):
      results[index] = chunk_results
      if cache is not None:
        cache.update(learned)
  return [result for index in range(count) for result in results[index]]


def started(function, items, processes=None, worth_forking=True):
  """function(items), begun now in a fork of this process (which sees items
  as they are now, at no cost) while this one goes on, where `apply` would
  fork (processes, None: one per core); else computed here first. Returns
  a handle whose result() waits for it and returns it (of core types, as
  map_chunks's results).

  (A fork per call: the items cost nothing to hand over, where pickling
  them to a long-lived fork costs this process more than the fork's work
  saves it.)
  """
  if not _forking(processes or os.cpu_count() or 1, items, worth_forking):
    return _Started(None, iter([(0, function(items), {})]))
  fork = _Forks(1, function, items)
  return _Started(fork, fork.results([(0, (0, len(items)))]))


class _Started:
  """What `started` returns: result() is function(items) once done."""

  def __init__(self, fork, results):
    self._fork, self._results = fork, results

  def result(self):
    """Asked once. Raises what the function raised; OSError if the fork
    died."""
    try:
      return next(self._results)[1]
    finally:
      if self._fork is not None:
        self._fork.close()


class _Forks:
  """A fork-context multiprocessing pool whose `processes` workers hold
  (function, items, cache) as this process has them when it starts, and
  die with this process; ended by close() or at the end of a `with`
  block."""

  def __init__(self, processes, function, items, cache=None):
    # Its workers: the children it starts (they are watched for a death).
    before = set(multiprocessing.active_children())
    self._pool = multiprocessing.get_context("fork").Pool(
        processes, _start_worker, (os.getpid(), functools.partial(
            _hold_work, function, items, cache)))
    self._workers = set(multiprocessing.active_children()) - before

  def __enter__(self):
    return self

  def __exit__(self, *_):
    self.close()

  def close(self):
    """Ends the workers, done or not."""
    self._pool.terminate()

  def results(self, chunks):
    """Hands the workers chunks, (index, (start, end)) each, at once;
    returns an iterator of (index, function(items[start:end]), the entries
    it added to the cache), as each is done."""
    return self._received(self._pool.imap_unordered(
        _work_on_chunk, chunks, chunksize=1))

  def _received(self, done):
    """done's results, unmarshalled.

    Raises:
      OSError: a worker died (the pool would wait for its task for ever).
    """
    while True:
      try:
        yield marshal.loads(done.next(timeout=_CHECK_SECONDS))
      except StopIteration:
        return
      except multiprocessing.TimeoutError:
        if not all(worker.is_alive() for worker in self._workers):
          raise _ended_early() from None


def _hold_work(function, items, cache):
  """In a new worker: keeps the work it was forked with for its tasks."""
  global _work
  _work = (function, items, cache)


def _work_on_chunk(chunk):
  """In a worker: (index, function(items[start:end]), the entries it added
  to the cache), marshalled, for chunk (index, (start, end))."""
  index, (start, end) = chunk
  function, items, cache = _work
  size = 0 if cache is None else len(cache)
  results = function(items[start:end])
  learned = {}
  if cache is not None:
    # Entries are added at the end, or after the cache is emptied when full
    # (then only those past `size` come back: a lost saving, no error).
    begin = size if len(cache) >= size else 0
    learned = dict(itertools.islice(cache.items(), begin, None))
  return marshal.dumps((index, results, learned))


def pool(workers, start=None):
  """A concurrent.futures process pool of `workers` processes that die with
  this one: forks of it where can_fork() (each starts with this process's
  memory, at no cost), else fresh interpreters.

  Args:
    start: a function each worker runs first, or None.
  """
  return concurrent.futures.ProcessPoolExecutor(
      workers, mp_context=multiprocessing.get_context(
          "fork" if can_fork() else "spawn"),
      initializer=_start_worker, initargs=(os.getpid(), start))


def _start_worker(parent_pid, start):
  """In a new worker: die with the parent, then run `start`."""
  die_with_parent(parent_pid)
  if start is not None:
    start()


def die_with_parent(parent_pid):
  """In a worker process: end when the process that started it dies,
  however it dies (kill -9 included), instead of living on blocked on a
  pipe that no one reads. A thread checks every _CHECK_SECONDS that the
  worker's parent is still parent_pid; it starts with every signal
  blocked, so that signals reach the worker's main thread and interrupt
  what it waits on. (Linux's PR_SET_PDEATHSIG signals a worker when the
  thread that started it ends: a pool's thread that replaces a dead worker
  ends with the pool, and its worker, killed then while it waits for a
  task, would leave the pool's task queue locked and the pool's
  terminate() waiting for ever.) Nothing where threads cannot block
  signals (Windows).
  """
  if not hasattr(signal, "pthread_sigmask"):
    return
  mask = signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
  try:
    threading.Thread(target=_exit_when_orphaned, args=(parent_pid,),
                     daemon=True).start()
  finally:
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def _exit_when_orphaned(parent_pid):
  while os.getppid() == parent_pid:
    time.sleep(_CHECK_SECONDS)
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
