"""`[CLS] context [SEP] ending [SEP]` for each ending of a context, as
run_swag packs sent1 with `sent2 ending` (tasks/swag/features.py), in
TensorFlow ops."""

import tensorflow as tf

from bert_tf.text.packing import packed_texts


def packed_choices(tokenizer, max_seq_length, contexts, endings):
  """The encoder's inputs for each context with each of its endings.

  Args:
    tokenizer: an InGraphTokenizer.
    max_seq_length: the width of each sequence.
    contexts: a string tensor [batch].
    endings: a string tensor [batch, choices], choices >= 1: each whole
      ending (SWAG's sent2 and ending, joined by a space).

  Returns:
    input_ids, input_mask and segment_ids, int32 [batch, choices,
    max_seq_length]: each pair packed and truncated as run_classifier
    packs a pair (text.packing.packed_texts).
  """
  choices = endings.shape[1]
  if choices is None:
    choices = tf.shape(endings)[1]
  inputs = packed_texts(tokenizer, max_seq_length,
                        tf.repeat(contexts, choices),
                        tf.reshape(endings, [-1]))
  # The batch size, where known, kept in the shape: the encoder's graph
  # is then the one the same ids of that shape give, rounding included.
  shape = [contexts.shape[0], endings.shape[1], max_seq_length]
  return {name: tf.ensure_shape(
      tf.reshape(value, [-1, choices, max_seq_length]), shape)
          for name, value in inputs.items()}
