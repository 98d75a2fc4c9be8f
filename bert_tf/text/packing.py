"""Packing token ids into BERT inputs in TensorFlow ops, as run_classifier does.

[CLS] a [SEP] (b [SEP]), padded with 0 to max_seq_length; segment 0 for the
first text with its [CLS] and [SEP], 1 for the second text and its [SEP].
Pairs are truncated as the original _truncate_seq_pair does: one token at a
time from the longer text (from the second on ties) until they fit. A pair
whose second text has no tokens is packed as a single text, as the
original packs it (its tokens_b is then falsy).

transformers packs pairs otherwise (its rules, TRANSFORMERS_RULES): the
longer text is cut first, the second on ties, so that it keeps the odd
token the original gives the first; and a pair stays a pair when its
second text is empty ([CLS] a [SEP] [SEP]). Models trained by transformers
or sentence-transformers (a CrossEncoder) were trained on its packing.
"""

import tensorflow as tf

from bert_tf.wordpiece.rules import (CLS_TOKEN, ORIGINAL_RULES, SEP_TOKEN,
                                     TRANSFORMERS_RULES)


def truncated_pair_lengths(length_a, length_b, budget):
  """Lengths _truncate_seq_pair leaves, in closed form.

  Popping from the longer side (the second on ties) ends with the first text
  holding ceil(budget / 2) tokens, unless one side was short enough to keep
  all of its tokens.
  """
  half_up = (budget + 1) // 2
  kept_a = tf.minimum(length_a, tf.maximum(budget - length_b, half_up))
  kept_b = tf.minimum(length_b, budget - kept_a)
  return kept_a, kept_b


def transformers_pair_lengths(length_a, length_b, budget):
  """Lengths transformers' longest_first truncation leaves: the longer text
  (the second on ties) keeps ceil(budget / 2) tokens, the other
  floor(budget / 2), unless one side is short enough to keep all of its
  tokens."""
  half_down = budget // 2
  cap_a = tf.where(length_a > length_b, budget - half_down, half_down)
  kept_a = tf.minimum(length_a, tf.maximum(budget - length_b, cap_a))
  kept_b = tf.minimum(length_b, budget - kept_a)
  return kept_a, kept_b


def _keep_first(ids, lengths):
  """Row i of a RaggedTensor cut to its first lengths[i] values."""
  positions = tf.ragged.range(ids.row_lengths())
  return tf.ragged.boolean_mask(
      ids, positions < tf.cast(lengths, positions.dtype)[:, None])


def pack_inputs(ids_a, max_seq_length, cls_id, sep_id, ids_b=None,
                tokenization_rules=ORIGINAL_RULES):
  """Builds input_ids, input_mask and segment_ids for one or two texts.

  Args:
    ids_a: RaggedTensor [batch, (tokens)] of the first text's ids.
    max_seq_length: width of the outputs.
    cls_id: id of [CLS].
    sep_id: id of [SEP].
    ids_b: optional RaggedTensor [batch, (tokens)] of the second text's ids
      (rows without any are packed as single texts, as the original).
    tokenization_rules: whose packing of pairs: ORIGINAL_RULES or
      TRANSFORMERS_RULES (see the module).

  Returns:
    A dict of int32 [batch, max_seq_length] tensors: input_ids, input_mask,
    segment_ids.
  """
  ids_a = tf.cast(ids_a, tf.int32)
  batch_size = ids_a.nrows()
  cls = tf.fill([batch_size, 1], cls_id)
  sep = tf.fill([batch_size, 1], sep_id)
  single = _packed([(cls, 0), (ids_a[:, :max_seq_length - 2], 0), (sep, 0)],
                   max_seq_length)
  if ids_b is None:
    return single
  ids_b = tf.cast(ids_b, tf.int32)
  pair_lengths = truncated_pair_lengths \
      if tokenization_rules == ORIGINAL_RULES else transformers_pair_lengths
  kept_a, kept_b = pair_lengths(
      tf.cast(ids_a.row_lengths(), tf.int32),
      tf.cast(ids_b.row_lengths(), tf.int32), max_seq_length - 3)
  pair = _packed([(cls, 0), (_keep_first(ids_a, kept_a), 0), (sep, 0),
                  (_keep_first(ids_b, kept_b), 1), (sep, 1)], max_seq_length)
  if tokenization_rules == TRANSFORMERS_RULES:
    return pair
  has_b = (ids_b.row_lengths() > 0)[:, None]
  return {name: tf.where(has_b, pair[name], single[name]) for name in pair}


def _packed(pieces, max_seq_length):
  """[(ids [batch, (tokens)], segment id)] joined, padded with 0."""
  input_ids = tf.concat([piece for piece, _ in pieces], axis=1)
  segment_ids = tf.concat(
      [tf.ones_like(piece) * segment for piece, segment in pieces], axis=1)
  shape = [None, max_seq_length]
  return {
      "input_ids": input_ids.to_tensor(0, shape=shape),
      "input_mask": tf.ones_like(input_ids).to_tensor(0, shape=shape),
      "segment_ids": segment_ids.to_tensor(0, shape=shape),
  }


def packed_texts(tokenizer, max_seq_length, text_a, text_b=None):
  """[batch] texts (and their pairs) -> the encoder's inputs, tokenised in
  the graph and packed as training packs them (data.text_inputs), both by
  the tokenizer's rules.

  tokenizer: an InGraphTokenizer."""
  ids_b = None if text_b is None else tokenizer(text_b)
  return pack_inputs(tokenizer(text_a), max_seq_length,
                     tokenizer.vocab[CLS_TOKEN], tokenizer.vocab[SEP_TOKEN],
                     ids_b, tokenizer.tokenization_rules)
