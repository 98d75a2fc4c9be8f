"""run_classifier's features against the original convert_single_example."""

import os

import numpy as np
import pytest

from bert_tf import tokenization
from bert_tf.tasks.glue import (examples as glue,
                                features as classifier_features)
from tests.support.helpers import SHARED_DIR
from tests.support.original_packing import original_features

VOCAB = os.path.join(SHARED_DIR, "vocab", "bert-base-uncased-vocab.txt")
GLUE_DIR = os.path.join(SHARED_DIR, "data", "glue")


@pytest.mark.shared
@pytest.mark.parametrize("task_name, directory, max_seq_length", [
    ("mrpc", "MRPC", 32),   # pairs, many truncated
    ("rte", "RTE", 64),
    ("cola", "CoLA", 16),   # single texts
])
def test_features_equal_the_originals(task_name, directory, max_seq_length):
  task = glue.get_task(task_name)
  examples = glue.read_examples(task, os.path.join(GLUE_DIR, directory),
                                "dev")[:300]
  tokenizer = tokenization.FullTokenizer(VOCAB, do_lower_case=True)
  ours = classifier_features.convert_examples(examples, task, tokenizer,
                                              max_seq_length)
  for row, example in enumerate(examples):
    expected = original_features(example, max_seq_length, tokenizer)
    expected["label_ids"] = list(task.labels).index(example.label)
    for name, value in expected.items():
      np.testing.assert_array_equal(ours[name][row], value,
                                    err_msg=f"{example.guid} {name}")
  assert ours["is_real_example"].tolist() == [1] * len(examples)


@pytest.mark.shared
def test_second_text_without_tokens_is_packed_as_a_single_text():
  task = glue.get_task("rte")
  examples = [glue.InputExample("dev-1", "one two three", " \t", "entailment"),
              glue.InputExample("dev-2", "one two three", "", "entailment")]
  tokenizer = tokenization.FullTokenizer(VOCAB, do_lower_case=True)
  features = classifier_features.convert_examples(examples, task, tokenizer, 8)
  for row, example in enumerate(examples):
    expected = original_features(example, 8, tokenizer)
    assert features["input_ids"][row].tolist() == expected["input_ids"]
    assert features["segment_ids"][row].tolist() == [0] * 8


def test_sts_b_labels_are_scores():
  task = glue.get_task("sts-b")
  examples = [glue.InputExample("dev-1", "a", "b", 3.8),
              glue.InputExample("test-1", "a", "b", None, index="0")]
  labels = classifier_features.label_ids(examples, task)
  assert labels.dtype == np.float32
  np.testing.assert_allclose(labels, [3.8, 0.0])
