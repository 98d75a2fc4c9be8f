"""SWAG features checked by hand: four pairs per row, packed and truncated
as run_classifier packs a pair."""

import pytest

from bert_tf import tokenization
from bert_tf.tasks.swag import features as multiple_choice_features
from bert_tf.tasks.swag.examples import SwagExample

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "man", "sits", "he",
         "stands", "sleeps", "eats", "runs", "down", "."]
ID = {token: index for index, token in enumerate(VOCAB)}


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
  path = tmp_path_factory.mktemp("vocab") / "vocab.txt"
  path.write_text("\n".join(VOCAB) + "\n")
  return tokenization.FullTokenizer(str(path), do_lower_case=True)


def ids(text):
  return [ID[token] for token in text.split()]


def test_each_ending_is_a_pair_with_the_context(tokenizer):
  example = SwagExample("0", "A man sits.", "He", ("stands.", "sleeps.",
                                                   "eats.", "runs down."),
                        2, 2)
  features = multiple_choice_features.convert_examples([example], tokenizer,
                                                       12)
  assert features["input_ids"].shape == (1, 4, 12)
  assert features["input_ids"][0].tolist() == [
      ids(f"[CLS] a man sits . [SEP] he {ending} . [SEP]") + [0] * pad
      for ending, pad in (("stands", 2), ("sleeps", 2), ("eats", 2),
                          ("runs down", 1))]
  assert features["segment_ids"][0, 3].tolist() == [0] * 6 + [1] * 5 + [0]
  assert features["input_mask"][0, 0].tolist() == [1] * 10 + [0] * 2
  assert features["label_ids"].tolist() == [2]
  assert features["is_real_example"].tolist() == [1]


def test_the_longer_text_is_truncated_first(tokenizer):
  example = SwagExample("0", "a man sits down . a man sits", "he",
                        ("stands", "sleeps", "eats", "runs"), None, 2)
  features = multiple_choice_features.convert_examples([example], tokenizer,
                                                       9)
  # 6 tokens for both texts: the context (8) is cut to 4, "he stands" kept.
  assert features["input_ids"][0, 0].tolist() == ids(
      "[CLS] a man sits down [SEP] he stands [SEP]")
  assert features["label_ids"].tolist() == [0]
