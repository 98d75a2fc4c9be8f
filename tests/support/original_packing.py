"""The original run_classifier's packing, as the reference for ours."""


def original_features(example, max_seq_length, tokenizer):
  """convert_single_example of the original run_classifier.py, re-expressed."""
  tokens_a = tokenizer.tokenize(example.text_a)
  tokens_b = tokenizer.tokenize(example.text_b) if example.text_b else None
  if tokens_b:
    while len(tokens_a) + len(tokens_b) > max_seq_length - 3:
      (tokens_a if len(tokens_a) > len(tokens_b) else tokens_b).pop()
  else:
    tokens_a = tokens_a[:max_seq_length - 2]
  tokens = ["[CLS]"] + tokens_a + ["[SEP]"]
  segment_ids = [0] * len(tokens)
  if tokens_b:
    tokens += tokens_b + ["[SEP]"]
    segment_ids += [1] * (len(tokens_b) + 1)
  input_ids = tokenizer.convert_tokens_to_ids(tokens)
  padding = [0] * (max_seq_length - len(input_ids))
  return {"input_ids": input_ids + padding,
          "input_mask": [1] * len(input_ids) + padding,
          "segment_ids": segment_ids + padding}
