import random

import pytest

from bert_tf.data.pretraining_instances import shuffle


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
