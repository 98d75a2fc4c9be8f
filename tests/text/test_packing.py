import itertools

import numpy as np
import tensorflow as tf

from bert_tf.text import pack_inputs, truncated_pair_lengths

CLS, SEP = 101, 102


def original_truncate_seq_pair(tokens_a, tokens_b, max_length):
  """run_classifier's _truncate_seq_pair: pop from the longer, b on ties."""
  tokens_a, tokens_b = list(tokens_a), list(tokens_b)
  while len(tokens_a) + len(tokens_b) > max_length:
    if len(tokens_a) > len(tokens_b):
      tokens_a.pop()
    else:
      tokens_b.pop()
  return tokens_a, tokens_b


def test_closed_form_truncation_equals_popping():
  grid = list(itertools.product(range(12), range(12), range(0, 15)))
  length_a, length_b, budget = (np.array(column) for column in zip(*grid))
  kept_a, kept_b = truncated_pair_lengths(length_a, length_b, budget)
  for (a, b, m), got_a, got_b in zip(grid, kept_a.numpy(), kept_b.numpy()):
    want_a, want_b = original_truncate_seq_pair(range(a), range(b), m)
    assert (got_a, got_b) == (len(want_a), len(want_b)), (a, b, m)


def test_pair_packing_as_convert_single_example():
  ids_a = [[5, 6, 7, 8, 9], [5], [5, 6, 7, 8, 9, 10, 11]]
  ids_b = [[20, 21, 22], [20, 21, 22, 23, 24, 25, 26, 27], [20]]
  max_seq_length = 8
  packed = pack_inputs(tf.ragged.constant(ids_a), max_seq_length, CLS, SEP,
                       tf.ragged.constant(ids_b))
  for row, (a, b) in enumerate(zip(ids_a, ids_b)):
    a, b = original_truncate_seq_pair(a, b, max_seq_length - 3)
    ids = [CLS] + a + [SEP] + b + [SEP]
    segments = [0] * (len(a) + 2) + [1] * (len(b) + 1)
    padding = [0] * (max_seq_length - len(ids))
    assert packed["input_ids"][row].numpy().tolist() == ids + padding
    assert packed["segment_ids"][row].numpy().tolist() == segments + padding
    assert packed["input_mask"][row].numpy().tolist() == (
        [1] * len(ids) + padding)
  assert all(value.dtype == tf.int32 for value in packed.values())


def test_single_text_keeps_max_seq_length_minus_two():
  packed = pack_inputs(tf.ragged.constant([[5, 6, 7, 8, 9], [5], []]), 5,
                       CLS, SEP)
  assert packed["input_ids"].numpy().tolist() == [
      [CLS, 5, 6, 7, SEP], [CLS, 5, SEP, 0, 0], [CLS, SEP, 0, 0, 0]]
  assert packed["segment_ids"].numpy().sum() == 0
  assert packed["input_mask"].numpy().sum(axis=1).tolist() == [5, 3, 2]


def test_a_pair_without_second_tokens_is_packed_as_one_text():
  """As the original: its tokens_b is empty, so falsy."""
  ids_a = tf.ragged.constant([[5, 6, 7, 8, 9], [5, 6]])
  packed = pack_inputs(ids_a, 5, CLS, SEP,
                       tf.ragged.constant([[], [20]], tf.int32))
  single = pack_inputs(ids_a, 5, CLS, SEP)
  for name in packed:
    assert packed[name][0].numpy().tolist() == single[name][0].numpy() \
        .tolist(), name
  assert packed["input_ids"][1].numpy().tolist() == [CLS, 5, SEP, 20, SEP]
