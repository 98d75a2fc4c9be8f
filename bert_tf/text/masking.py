"""Masking for the masked-LM objective in TensorFlow ops, as
create_pretraining_data masks (bert_tf.pretraining.instances): the same
choices, drawn from stateless random ops instead of Python's random, so
that a tf.data pipeline draws new masks each epoch.

Per sequence: num_to_predict = min(max_predictions_per_seq, max(1,
round(tokens * masked_lm_prob))) of its tokens ([CLS] and [SEP] never) are
chosen uniformly at random, word pieces one by one or, with whole-word
masking, whole words (a "##" piece joins the word before it; a word that
would overshoot num_to_predict is skipped, as the original skips it); each
chosen token becomes [MASK] with probability 0.8, stays with 0.1, and is
replaced by a uniformly drawn vocabulary word with 0.1.
"""

import dataclasses

import tensorflow as tf


@dataclasses.dataclass(frozen=True)
class MaskingOptions:
  """create_pretraining_data's flags that shape the masks."""
  max_predictions_per_seq: int = 20
  masked_lm_prob: float = 0.15
  do_whole_word_mask: bool = False


def mask_tokens(input_ids, input_mask, vocabulary, options, seed):
  """Masks packed sequences.

  Args:
    input_ids, input_mask: int32 [batch, seq_length], as packed.
    vocabulary: a masking_vocabulary.MaskingVocabulary.
    options: MaskingOptions.
    seed: int [2], the stateless ops' seed.

  Returns:
    (masked input_ids, masked_lm_positions, masked_lm_ids,
    masked_lm_weights): the positions ascending, each [batch,
    max_predictions_per_seq] padded with 0 (weights 1.0 for a prediction,
    0.0 for padding).
  """
  seeds = tf.random.experimental.stateless_split(seed, 5)
  shape = tf.shape(input_ids)
  candidates = (tf.cast(input_mask, tf.bool)
                & tf.not_equal(input_ids, vocabulary.cls_id)
                & tf.not_equal(input_ids, vocabulary.sep_id))
  tokens = tf.reduce_sum(tf.cast(input_mask, tf.float32), axis=1)
  num_to_predict = tf.minimum(
      options.max_predictions_per_seq,
      tf.maximum(1, tf.cast(tf.round(tokens * options.masked_lm_prob),
                            tf.int32)))
  if options.do_whole_word_mask:
    chosen = _choose_whole_words(input_ids, candidates, num_to_predict,
                                 vocabulary, seeds[0])
  else:
    chosen = _choose_pieces(candidates, num_to_predict, seeds[0])
  draw = tf.random.stateless_uniform(shape, seeds[1])
  keep = tf.random.stateless_uniform(shape, seeds[2]) < 0.5
  random_ids = tf.gather(vocabulary.random_word_ids,
                         tf.random.stateless_uniform(
                             shape, seeds[3],
                             maxval=len(vocabulary.random_word_ids),
                             dtype=tf.int32))
  masked_ids = tf.where(chosen & (draw < 0.8), vocabulary.mask_id,
                        tf.where(chosen & (draw >= 0.8) & ~keep, random_ids,
                                 input_ids))
  positions, ids, weights = _predictions(input_ids, chosen,
                                         options.max_predictions_per_seq)
  return masked_ids, positions, ids, weights


def _choose_pieces(candidates, num_to_predict, seed):
  """The first num_to_predict candidates of each row in a random order."""
  scores = tf.where(candidates, tf.random.stateless_uniform(
      tf.shape(candidates), seed), 2.0)
  ranks = tf.argsort(tf.argsort(scores, axis=1), axis=1)
  return candidates & (ranks < num_to_predict[:, None])


def _choose_whole_words(input_ids, candidates, num_to_predict, vocabulary,
                        seed):
  """Whole words, in a random order, while they fit num_to_predict."""
  is_continuation = tf.gather(tf.constant(vocabulary.is_continuation),
                              input_ids)
  starts = candidates & ~(is_continuation & _previous(candidates))
  # Each candidate's word: the number of word starts up to it, less one.
  words = tf.where(candidates, tf.cumsum(tf.cast(starts, tf.int32),
                                         axis=1) - 1, -1)
  length = tf.shape(input_ids)[1]
  # Each word's pieces (column 0 counts the non-candidates, dropped).
  sizes = tf.math.bincount(words + 1, minlength=length + 1,
                           maxlength=length + 1, axis=-1)[:, 1:]
  scores = tf.where(sizes > 0, tf.random.stateless_uniform(
      tf.shape(sizes), seed), 2.0)
  order = tf.argsort(scores, axis=1)  # words in a random order
  ordered_sizes = tf.gather(sizes, order, batch_dims=1)

  def take(count, size):
    fits = (size > 0) & (count < num_to_predict) & (
        count + size <= num_to_predict)
    return count + tf.where(fits, size, 0), fits

  _, taken = tf.scan(lambda state, size: take(state[0], size),
                     tf.transpose(ordered_sizes),
                     initializer=(tf.zeros_like(num_to_predict),
                                  tf.zeros_like(num_to_predict, tf.bool)))
  taken_words = tf.scatter_nd(
      tf.stack([tf.repeat(tf.range(tf.shape(order)[0]), length),
                tf.reshape(order, [-1])], axis=1),
      tf.reshape(tf.transpose(taken), [-1]), tf.shape(order))
  return candidates & tf.gather(taken_words, tf.maximum(words, 0),
                                batch_dims=1)


def _previous(values):
  """Each row's values shifted right by one (False first)."""
  return tf.pad(values[:, :-1], [[0, 0], [1, 0]])


def _predictions(input_ids, chosen, max_predictions):
  """The chosen positions ascending, their ids and weights, each padded to
  max_predictions."""
  length = tf.shape(input_ids)[1]
  positions = tf.range(length)[None, :]
  keys = tf.where(chosen, positions, length + positions)
  width = tf.minimum(max_predictions, length)
  _, order = tf.math.top_k(-keys, k=width)
  valid = tf.gather(chosen, order, batch_dims=1)
  padding = [[0, 0], [0, max_predictions - width]]
  masked_positions = tf.pad(tf.where(valid, order, 0), padding)
  masked_ids = tf.pad(tf.where(valid, tf.gather(input_ids, order,
                                                batch_dims=1), 0), padding)
  weights = tf.pad(tf.cast(valid, tf.float32), padding)
  return masked_positions, masked_ids, weights
