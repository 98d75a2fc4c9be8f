"""What the SQuAD tests compare with the original run_squad, in one form
for both sides: tests/fixtures/squad/make_reference.py computes it from
the original's objects (run under tensorflow.compat.v1), the tests from
bert_tf's arrays. Digests keep the fixtures small and free of the data
sets' text; the adversarial file's outputs are kept whole."""

import hashlib
import json
import os

import numpy as np

FIXTURE_DIR = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "fixtures", "squad")
ADVERSARIAL_FILE = os.path.join(FIXTURE_DIR, "adversarial-v2.0.json")
REFERENCE_FILE = os.path.join(FIXTURE_DIR, "original_outputs.json")

# (name, file under ../shared/data/squad or None for ADVERSARIAL_FILE,
#  questions kept [first, last), vocab under ../shared/vocab, do_lower_case,
#  version_2, max_seq_length, doc_stride, max_query_length, n_best_size,
#  max_answer_length)
CASES = (
    ("dev_v1_384", "dev-v1.1.json", (810, 1169),
     "bert-base-uncased-vocab.txt", True, False, 384, 128, 64, 20, 30),
    ("dev_v1_64", "dev-v1.1.json", (2804, 3036),
     "bert-base-cased-vocab.txt", False, False, 64, 16, 12, 5, 8),
    ("sample_v2", "sample-v2.0.json", (0, 14),
     "bert-base-uncased-vocab.txt", True, True, 96, 24, 16, 20, 30),
    ("adversarial_uncased", None, (0, None),
     "bert-base-uncased-vocab.txt", True, True, 48, 8, 10, 20, 30),
    ("adversarial_cased", None, (0, None),
     "bert-base-multilingual-cased-vocab.txt", False, True, 40, 5, 8, 4, 6),
)


def digest(value):
  return hashlib.sha256(json.dumps(value, ensure_ascii=True).encode())\
      .hexdigest()[:16]


def feature_form(unique_id, example_index, doc_span_index, tokens,
                 token_to_orig_map, token_is_max_context, input_ids,
                 input_mask, segment_ids, start_position, end_position,
                 is_impossible):
  """One feature as the original's InputFeatures holds it."""
  return [int(unique_id), int(example_index), int(doc_span_index),
          list(tokens),
          sorted((int(k), int(v)) for k, v in token_to_orig_map.items()),
          sorted((int(k), bool(v)) for k, v in token_is_max_context.items()),
          [int(x) for x in input_ids], [int(x) for x in input_mask],
          [int(x) for x in segment_ids],
          None if start_position is None else int(start_position),
          None if end_position is None else int(end_position),
          bool(is_impossible)]


def features_forms(features, tokenizer, is_training):
  """feature_form of each row of bert_tf's feature arrays."""
  forms = []
  for row in range(len(features["unique_ids"])):
    length = int(features["input_mask"][row].sum())
    in_context = np.nonzero(features["token_to_orig"][row] >= 0)[0]
    forms.append(feature_form(
        features["unique_ids"][row], features["example_index"][row],
        features["doc_span_index"][row],
        tokenizer.convert_ids_to_tokens(
            features["input_ids"][row][:length].tolist()),
        {position: features["token_to_orig"][row, position]
         for position in in_context},
        {position: features["token_is_max_context"][row, position]
         for position in in_context},
        features["input_ids"][row], features["input_mask"][row],
        features["segment_ids"][row],
        features["start_positions"][row] if is_training else None,
        features["end_positions"][row] if is_training else None,
        features["is_impossible"][row] if is_training else False))
  return forms


def answer_form(prediction, nbest, null_odds):
  """One question's predictions.json, nbest and null_odds entries."""
  return [prediction, [[entry["text"], repr(float(entry["probability"])),
                        repr(float(entry["start_logit"])),
                        repr(float(entry["end_logit"]))] for entry in nbest],
          None if null_odds is None else repr(float(null_odds))]


def peaked_logits(input_mask, segment_ids, seed):
  """(start, end) float32 logits that look trained: noise, a peak on one
  context span per feature, and a high null score on some."""
  rng = np.random.RandomState(seed)
  shape = input_mask.shape
  start = rng.randn(*shape).astype(np.float32)
  end = rng.randn(*shape).astype(np.float32)
  for row in range(shape[0]):
    context = np.nonzero((segment_ids[row] == 1) & (input_mask[row] == 1))[0]
    context = context[:-1]  # not the final [SEP]
    position = context[rng.randint(len(context))]
    start[row, position] += 5.0
    end[row, min(position + rng.randint(4), context[-1])] += 5.0
    if rng.rand() < 0.3:
      start[row, 0] += 6.0
      end[row, 0] += 6.0
  return start, end
