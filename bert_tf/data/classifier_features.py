"""run_classifier's features: examples -> input_ids, input_mask, segment_ids,
label_ids, is_real_example, and the tf.data pipelines over them.

Texts are tokenised with FullTokenizer.encode_batch (the original's tokens,
compiled) and packed with bert_tf.text.pack_inputs, the same packing the
exported SavedModel runs in-graph: [CLS] a [SEP] (b [SEP]), the pair
truncated as the original's _truncate_seq_pair. As in the original, an
example whose second text has no tokens is packed as a single text.
"""

import logging

import numpy as np
import tensorflow as tf

from bert_tf.text.packing import pack_inputs

logger = logging.getLogger(__name__)

FEATURE_NAMES = ("input_ids", "input_mask", "segment_ids", "label_ids",
                 "is_real_example")
_PACK_BATCH = 4096


def convert_examples(examples, task, tokenizer, max_seq_length):
  """Features of examples, as numpy arrays with one row per example.

  Args:
    examples: glue.InputExample list.
    task: the glue.Task (for its labels).
    tokenizer: a tokenization.FullTokenizer.
    max_seq_length: the width of the id arrays.

  Returns:
    {input_ids, input_mask, segment_ids: int32 [n, max_seq_length],
     label_ids: int32 [n] (float32 for regression), is_real_example: [n]}.
  """
  ids_a = tokenizer.encode_batch([example.text_a for example in examples])
  if task.has_text_pairs:
    ids_b = tokenizer.encode_batch([example.text_b or ""
                                    for example in examples])
  else:
    ids_b = [[]] * len(examples)
  cls_id, sep_id = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])
  parts = []
  for start in range(0, len(examples), _PACK_BATCH):
    parts.append(_pack(ids_a[start:start + _PACK_BATCH],
                       ids_b[start:start + _PACK_BATCH],
                       max_seq_length, cls_id, sep_id))
  features = {name: np.concatenate([part[name] for part in parts])
              for name in parts[0]}
  features["label_ids"] = label_ids(examples, task)
  features["is_real_example"] = np.ones(len(examples), np.int32)
  return features


def label_ids(examples, task):
  """Label indices (0 for test examples), or the float scores of STS-B."""
  if task.is_regression:
    return np.array([example.label or 0.0 for example in examples], np.float32)
  index = {label: number for number, label in enumerate(task.labels)}
  return np.array([index.get(example.label, 0) for example in examples],
                  np.int32)


def _ragged(id_lists):
  lengths = [len(ids) for ids in id_lists]
  values = np.fromiter((token for ids in id_lists for token in ids), np.int32,
                       count=sum(lengths))
  return tf.RaggedTensor.from_row_lengths(values, lengths)


def _pack(ids_a, ids_b, max_seq_length, cls_id, sep_id):
  """Pairs where the second text has tokens; single texts elsewhere."""
  ragged_a = _ragged(ids_a)
  has_b = np.array([len(ids) > 0 for ids in ids_b])
  single = None if has_b.all() else {
      name: value.numpy() for name, value in
      pack_inputs(ragged_a, max_seq_length, cls_id, sep_id).items()}
  if not has_b.any():
    return single
  pair = {name: value.numpy() for name, value in pack_inputs(
      ragged_a, max_seq_length, cls_id, sep_id, _ragged(ids_b)).items()}
  if single is None:
    return pair
  return {name: np.where(has_b[:, None], pair[name], single[name])
          for name in pair}


def pad_to_batches(features, batch_size):
  """Features with all-zero rows (is_real_example 0) appended, so that every
  batch is full: fixed shapes for XLA and TPUs, as the original's
  PaddingInputExample."""
  count = len(features["is_real_example"])
  missing = -count % batch_size
  return {name: np.concatenate([value, np.zeros((missing,) + value.shape[1:],
                                                value.dtype)])
          for name, value in features.items()}


def classifier_dataset(features, batch_size, is_training, seed=None):
  """Batches of a feature dict.

  Training: repeated, shuffled (buffer 100, the original's), full batches.
  Otherwise: in order, once, padded to full batches (see pad_to_batches),
  with each row's example_index for Trainer.predict.
  """
  if not is_training:
    features = pad_to_batches(
        {**features, "example_index": np.arange(
            len(features["is_real_example"]), dtype=np.int32)}, batch_size)
  dataset = tf.data.Dataset.from_tensor_slices(features)
  if is_training:
    dataset = dataset.repeat().shuffle(100, seed=seed)
  options = tf.data.Options()
  options.experimental_distribute.auto_shard_policy = \
      tf.data.experimental.AutoShardPolicy.DATA
  return (dataset.batch(batch_size, drop_remainder=True)
          .prefetch(tf.data.AUTOTUNE).with_options(options))
