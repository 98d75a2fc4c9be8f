import itertools

import numpy as np
import tensorflow as tf

from bert_tf.text.packing import pack_inputs, truncated_pair_lengths
from bert_tf.text.packing import transformers_pair_lengths
from bert_tf.wordpiece.rules import TRANSFORMERS_RULES

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


def tokenizers_longest_first(length_a, length_b, max_length):
  """Hugging Face tokenizers' TruncationStrategy::LongestFirst for a pair
  (tokenizers/src/utils/truncation.rs), which transformers' BERT
  tokenizers run: the lengths it keeps."""
  if length_a + length_b <= max_length:
    return length_a, length_b
  n1, n2 = length_a, length_b
  swap = n1 > n2
  if swap:
    n1, n2 = n2, n1
  n2 = n1 if n1 > max_length else max(n1, max_length - n1)
  if n1 + n2 > max_length:
    n1 = max_length // 2
    n2 = n1 + max_length % 2
  if swap:
    n1, n2 = n2, n1
  return min(length_a, n1), min(length_b, n2)


def test_transformers_truncation_equals_tokenizers_longest_first():
  grid = list(itertools.product(range(12), range(12), range(0, 15)))
  length_a, length_b, budget = (np.array(column) for column in zip(*grid))
  kept_a, kept_b = transformers_pair_lengths(length_a, length_b, budget)
  differs = 0
  for (a, b, m), got_a, got_b in zip(grid, kept_a.numpy(), kept_b.numpy()):
    assert (got_a, got_b) == tokenizers_longest_first(a, b, m), (a, b, m)
    differs += (got_a, got_b) != tuple(
        map(len, original_truncate_seq_pair(range(a), range(b), m)))
  assert differs  # the two packings are not the same one


def test_transformers_packing_keeps_a_pair_with_an_empty_second_text():
  """[CLS] a [SEP] [SEP], the last [SEP] in segment 1; and two texts over
  the budget: the second keeps the odd token, where the original's first
  does."""
  ids_a = tf.ragged.constant([[5, 6], [5, 6, 7, 8, 9]])
  ids_b = tf.ragged.constant([[], [20, 21, 22, 23, 24]], tf.int32)
  packed = pack_inputs(ids_a, 8, CLS, SEP, ids_b, TRANSFORMERS_RULES)
  assert packed["input_ids"].numpy().tolist() == [
      [CLS, 5, 6, SEP, SEP, 0, 0, 0], [CLS, 5, 6, SEP, 20, 21, 22, SEP]]
  assert packed["segment_ids"].numpy().tolist() == [
      [0, 0, 0, 0, 1, 0, 0, 0], [0, 0, 0, 0, 1, 1, 1, 1]]
  assert packed["input_mask"].numpy().sum(axis=1).tolist() == [5, 8]
  original = pack_inputs(ids_a, 8, CLS, SEP, ids_b)
  assert original["input_ids"].numpy().tolist() == [
      [CLS, 5, 6, SEP, 0, 0, 0, 0], [CLS, 5, 6, 7, SEP, 20, 21, SEP]]
