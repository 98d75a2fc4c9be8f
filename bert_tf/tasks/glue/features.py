"""run_classifier's features: GLUE/XNLI examples -> input_ids, input_mask,
segment_ids (text_inputs.encode_texts), label_ids, is_real_example."""

import numpy as np

from bert_tf.data.text_inputs import encode_texts


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
  features = encode_texts(
      tokenizer, [example.text_a for example in examples],
      [example.text_b for example in examples] if task.has_text_pairs
      else None, max_seq_length)
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
