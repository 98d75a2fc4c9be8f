"""parallel.paused: the collector off for bulk work, nothing lost after."""

import gc

import pytest

from bert_tf import parallel


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
