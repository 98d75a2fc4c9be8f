import random

import pytest

from bert_tf.pretraining.instances import randint, shuffle


@pytest.mark.parametrize("length", [0, 1, 2, 3, 4, 7, 8, 9, 16, 17, 127, 128,
                                    129, 1000, 4097])
def test_shuffle_is_random_shuffle(length):
  for seed in range(20):
    ours, theirs = random.Random(seed), random.Random(seed)
    items, expected = list(range(length)), list(range(length))
    shuffle(items, ours)
    theirs.shuffle(expected)
    assert items == expected
    assert ours.getstate() == theirs.getstate()


@pytest.mark.parametrize("low, high", [(0, 0), (0, 1), (1, 2), (2, 125),
                                       (0, 30521), (5, 1 << 40)])
def test_randint_is_random_randint(low, high):
  ours, theirs = random.Random(7), random.Random(7)
  assert [randint(ours, low, high) for _ in range(200)] == [
      theirs.randint(low, high) for _ in range(200)]
  assert ours.getstate() == theirs.getstate()
