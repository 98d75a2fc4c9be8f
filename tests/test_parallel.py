"""Large batches on every core (forks), and the collector paused over them.

A process that has loaded TensorFlow is never forked, and pytest's has, so
the forking runs in fresh processes of their own.
"""

import gc
import subprocess
import sys

import pytest

from bert_tf import parallel
from tests.support.helpers import PROJECT_DIR

VOCAB = f"{PROJECT_DIR}/vocab/demo_uncased_vocab.txt"

_FORKS = """
import os, select, sys, time
from bert_tf import parallel
from bert_tf import tokenization
from bert_tf.wordpiece import tokenizer as tokenizer_module
from tests.support.tokenization_cases import original_tokenize
assert parallel.can_fork()
# Chunks long enough that no fork can take them all before the others
# start: each takes the next chunk as it finishes one, so every fork works.
def pids(processes):
  return parallel.map_chunks(lambda chunk: time.sleep(0.1) or [os.getpid()]
                           * len(chunk), list(range(120)), processes)
assert len(set(pids(3))) == 3 and os.getpid() not in pids(2)
# The results come back in Python's core types, as they were.
values = [None, 1, 2.5, "é", b"x", (1,), [2], {"a": 3}, {4}, 2 ** 70]
assert parallel.map_chunks(lambda chunk: chunk, values * 4, 2) == values * 4

# `started` runs its function in a fork, or here with one process, for
# fewer than two items, or once TensorFlow is loaded; what the function
# raises reaches this process, forked or not.
def started_pid(processes, items=(1, 2), worth_forking=True):
  return parallel.started(lambda items: os.getpid(), list(items), processes,
                        worth_forking).result()
assert started_pid(2) != os.getpid()
assert (started_pid(1) == started_pid(2, items=[1])
        == started_pid(2, worth_forking=False) == os.getpid())
def check_raises(call, error, text):
  try:
    call()
  except error as raised:
    assert text in str(raised), raised
    return
  raise AssertionError(f"no {error.__name__}")
def check_started_raises():
  check_raises(lambda: parallel.started(lambda items: int("x"), [1, 2],
                                        2).result(), ValueError, "'x'")
check_started_raises()
check_raises(lambda: parallel.map_chunks(lambda chunk: int("y"), [1, 2], 2),
             ValueError, "'y'")
# `started`'s fork begins its work at once, before result() is asked for.
begun, begin = os.pipe()
handle = parallel.started(lambda items: os.write(begin, b"x"), [1, 2], 2)
assert select.select([begun], [], [], 60)[0] and handle.result() == 1

# What the forks add to the cache comes back to this process's.
cache = {}
def remember_pids(chunk):
  time.sleep(0.1)
  cache.update((item, os.getpid()) for item in chunk)
  return chunk
assert parallel.map_chunks(remember_pids, list(range(120)), 2,
                         cache) == list(range(120))
assert sorted(cache) == list(range(120)) and len(set(cache.values())) == 2
assert os.getpid() not in cache.values()

# A fork that dies (the kernel's OOM killer, say) is one OSError, not a
# traceback from the process pool, nor a wait for ever.
ENDED = "ended before its work was done"
check_raises(lambda: parallel.started(lambda items: os._exit(1), [1, 2],
                                      2).result(), OSError, ENDED)
check_raises(lambda: parallel.map_chunks(lambda chunk: os._exit(1),
                                         list(range(8)), 2), OSError, ENDED)

# Texts of new and repeated words, some empty, over many chunks.
words = ["UNwant\\u00e9d,running", "lowest", "hello", "\\u4e2d\\u6587", ""]
texts = [" ".join(words[(index * 7 + offset) % len(words)]
                  + (str(index) if offset == 0 else "")
                  for offset in range(index % 4)) for index in range(500)]
tokenizer_module._PARALLEL_MIN_CHARS = 1
tokenizer = tokenization.FullTokenizer(sys.argv[1])
expected = [tokenizer.convert_tokens_to_ids(original_tokenize(tokenizer, text))
            for text in texts]
for processes in (2, 3):
  tokenizer = tokenization.FullTokenizer(sys.argv[1])
  assert tokenizer.encode_many(texts, processes=processes) == expected
  # Every word is known here now, the forks' too, and the next call of
  # known words alone gives the same ids.
  assert set(tokenizer._word_ids) == {
      word for text in texts for word in tokenizer._chars.cleaned(text).split()}
  assert tokenizer.encode_many(texts, processes=processes) == expected
import tensorflow
assert not parallel.can_fork()
assert started_pid(2) == os.getpid()
check_started_raises()
print("ok")
"""

def run_python(script):
  return subprocess.run([sys.executable, "-c", script, VOCAB],
                        capture_output=True, text=True, cwd=PROJECT_DIR,
                        check=False)


@pytest.mark.skipif(not sys.platform.startswith("linux"),
                    reason="bert_tf forks on Linux only")
def test_forks_share_the_work_and_encode_every_text_in_order():
  """map_chunks runs chunks in forks, and what the forks add to a cache
  comes back; `started` runs its work in a fork at once; encode_many's
  forks give every text's ids in order, as the original, and their words to
  the tokenizer's cache; once TensorFlow is loaded, nothing forks; what a
  fork raises is raised here; a fork that dies is an OSError."""
  result = run_python(_FORKS)
  assert result.returncode == 0, result.stderr[-3000:]
  assert result.stdout.split() == ["ok"]


class _Node:
  """An object the collector tracks, which can be part of a cycle."""


@pytest.fixture(autouse=True)
def collector_enabled():
  enabled = gc.isenabled()
  gc.enable()
  yield
  if not enabled:
    gc.disable()


def _in_generation(obj, generation):
  return any(item is obj for item in gc.get_objects(generation))


def test_paused_inside_and_enabled_after():
  with parallel.paused():
    assert not gc.isenabled()
  assert gc.isenabled()


def test_left_disabled_when_it_was():
  gc.disable()
  with parallel.paused():
    made = [1, 2]
  assert not gc.isenabled()
  assert _in_generation(made, 0)


def test_what_the_block_made_is_in_the_oldest_generation():
  with parallel.paused():
    made = [[index] for index in range(1000)]
  assert _in_generation(made[0], 2) and not _in_generation(made[0], 0)
  assert gc.get_count()[0] < 1000


class _Finalized:
  """Notes its own collection."""

  def __init__(self, collected):
    self.collected = collected

  def __del__(self):
    self.collected.append(True)


def test_cycles_made_in_the_block_are_still_collected():
  with parallel.paused():
    node = _Node()
    node.cycle = node
  collected = []
  node.finalizer = _Finalized(collected)
  del node
  gc.collect()
  assert collected == [True]


def test_frozen_objects_stay_frozen():
  gc.freeze()
  try:
    frozen = gc.get_freeze_count()
    with parallel.paused():
      made = [[1]]
    assert gc.get_freeze_count() >= frozen > 0
    assert made
  finally:
    gc.unfreeze()
