"""Texts -> the encoder's input arrays, packed as the original packs them.

Single texts become [CLS] a [SEP], pairs [CLS] a [SEP] b [SEP] with the
longer text truncated first (the original's _truncate_seq_pair); a pair
whose second text has no tokens is packed as a single text, as the
original does. Texts are tokenised with text.batch_encoding.encode_batch
(the original's tokens, compiled for large batches) and packed with
bert_tf.text.packing.pack_inputs, the packing exported SavedModels run in-graph,
so serving cannot drift from training. Every task with text inputs
(classification, multiple choice, feature extraction) uses this.
"""

import numpy as np
import tensorflow as tf

from bert_tf.text.batch_encoding import encode_batch
from bert_tf.text.packing import pack_inputs
from bert_tf.wordpiece.rules import CLS_TOKEN, SEP_TOKEN

_PACK_BATCH = 4096


def encode_texts(tokenizer, texts_a, texts_b=None, max_seq_length=128):
  """{input_ids, input_mask, segment_ids}: int32 [len(texts_a),
  max_seq_length].

  Args:
    tokenizer: a tokenization.FullTokenizer.
    texts_a: the first texts.
    texts_b: the second texts (None or "" for a single text), or None.
    max_seq_length: the width of the arrays.
  """
  ids_a = encode_batch(tokenizer, texts_a)
  if texts_b is None:
    ids_b = [[]] * len(ids_a)
  else:
    ids_b = encode_batch(tokenizer, [text or "" for text in texts_b])
  cls_id, sep_id = tokenizer.convert_tokens_to_ids([CLS_TOKEN, SEP_TOKEN])
  parts = [_pack(ids_a[start:start + _PACK_BATCH],
                 ids_b[start:start + _PACK_BATCH], max_seq_length, cls_id,
                 sep_id)
           for start in range(0, len(ids_a), _PACK_BATCH)]
  return {name: np.concatenate([part[name] for part in parts])
          for name in parts[0]}


def _ragged(id_lists):
  lengths = [len(ids) for ids in id_lists]
  values = np.fromiter((token for ids in id_lists for token in ids), np.int32,
                       count=sum(lengths))
  return tf.RaggedTensor.from_row_lengths(values, lengths)


def _pack(ids_a, ids_b, max_seq_length, cls_id, sep_id):
  """pack_inputs' arrays; pairs are only packed where some second text
  has tokens (pack_inputs packs the others as single texts)."""
  return {name: value.numpy() for name, value in pack_inputs(
      _ragged(ids_a), max_seq_length, cls_id, sep_id,
      _ragged(ids_b) if any(ids_b) else None).items()}
