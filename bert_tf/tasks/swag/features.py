"""SWAG rows -> multiple-choice features, as the paper fine-tunes SWAG
(§4.4): for each ending, `[CLS] sent1 [SEP] sent2 ending [SEP]`, packed and
truncated as run_classifier packs a pair (text_inputs.encode_texts).

Features (numpy, one row per example):
  input_ids, input_mask, segment_ids: int32 [n, 4, max_seq_length].
  label_ids: int32 [n], the right ending (0 where unknown).
  is_real_example: int32 [n], 1.
"""

import numpy as np

from bert_tf.data.text_inputs import encode_texts
from bert_tf.tasks.swag.examples import NUM_CHOICES


def convert_examples(examples, tokenizer, max_seq_length):
  """Features of swag.SwagExample rows, in order."""
  features = encode_texts(
      tokenizer,
      [example.context for example in examples for _ in range(NUM_CHOICES)],
      [f"{example.start_ending} {ending}" for example in examples
       for ending in example.endings], max_seq_length)
  features = {name: value.reshape(len(examples), NUM_CHOICES, max_seq_length)
              for name, value in features.items()}
  features["label_ids"] = np.array(
      [example.label or 0 for example in examples], np.int32)
  features["is_real_example"] = np.ones(len(examples), np.int32)
  return features
