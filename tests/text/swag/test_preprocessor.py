"""BertMultipleChoicePreprocessor: each context packed with each of its
endings as run_swag's features pack a row, in TensorFlow ops."""

import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from bert_tf import tokenization
from bert_tf.tasks.swag import features as multiple_choice_features
from bert_tf.tasks.swag.examples import SwagExample
from tests.support.squad_fixtures import DEMO_VOCAB

LONG = " ".join(["the quick brown fox jumps over the lazy dog"] * 6)
# (context, start of the ending, the four endings): unicode, an empty
# context, an empty ending, texts longer than max_seq_length.
ROWS = [
    ("A man sits at the piano.", "He", ("plays.", "eats it.", "sleeps.",
                                        "runs away from it.")),
    ("Café naïve — 東京 🎹 résumé", "Zoë", ("sings «ça»", "日本語", "",
                                          "ÅNGSTRÖM")),
    ("", "", ("an ending alone", "", "x", "y z")),
    (LONG, "then", ("short", LONG, "a", LONG + " " + LONG)),
]
MAX_SEQ_LENGTH = 24


def test_each_ending_is_packed_as_run_swags_features():
  examples = [SwagExample(str(index), context, start, endings, None, 2)
              for index, (context, start, endings) in enumerate(ROWS)]
  expected = multiple_choice_features.convert_examples(
      examples, tokenization.FullTokenizer(DEMO_VOCAB, True), MAX_SEQ_LENGTH)
  preprocessor = bert_tf.BertMultipleChoicePreprocessor(
      DEMO_VOCAB, True, MAX_SEQ_LENGTH)
  packed = preprocessor(([context for context, _, _ in ROWS],
                         [[f"{start} {ending}" for ending in endings]
                          for _, start, endings in ROWS]))
  for name, value in packed.items():
    np.testing.assert_array_equal(value, expected[name], err_msg=name)


def test_any_number_of_endings_and_a_graph_of_unknown_batch():
  preprocessor = bert_tf.BertMultipleChoicePreprocessor(DEMO_VOCAB, True, 8)
  assert preprocessor((["a"], [["b", "c"]]))["input_ids"].shape == (1, 2, 8)
  assert preprocessor((["a"] * 3, [["b"] * 5] * 3))["input_ids"].shape == (
      3, 5, 8)

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string),
                                tf.TensorSpec([None, None], tf.string)])
  def pack(contexts, endings):
    return preprocessor((contexts, endings))["input_ids"]

  eager = preprocessor((["a man"], [["he sits", "he runs"]]))["input_ids"]
  np.testing.assert_array_equal(
      pack(tf.constant(["a man"]), tf.constant([["he sits", "he runs"]])),
      eager)
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match="contexts and endings differ in batch size"):
    pack(tf.constant(["a", "b"]), tf.constant([["c"]]))


@pytest.mark.parametrize("inputs, message", [
    (["a"], "expected a pair \\(contexts, endings\\), got list"),
    ((["a"], ["b"]), "endings has shape \\(1,\\); expected \\[batch, "
     "choices\\]"),
    ((["a", "b"], [["c"]]), "2 contexts but 1 rows of endings"),
    ((["a"], [["b"], ["c", "d"]]), "endings has rows of different lengths"),
    ((tf.constant(["a"]), tf.ragged.constant([["b"]])), "endings is ragged"),
    ((tf.constant(["a"]), tf.zeros([1, 0], tf.string)),
     "endings has shape \\(1, 0\\); expected at least one ending"),
])
def test_bad_shapes_are_refused_in_one_line(inputs, message):
  preprocessor = bert_tf.BertMultipleChoicePreprocessor(DEMO_VOCAB, True, 8)
  with pytest.raises(ValueError,
                     match=f"^BertMultipleChoicePreprocessor: {message}"):
    preprocessor(inputs)

