"""Tagging features checked by hand: first-piece labels, windows of long
sentences, document context."""

import numpy as np
import pytest

from bert_tf import tokenization
from bert_tf.tasks.ner import examples as conll, features as tagging_features
from bert_tf.text.ner.features import word_values

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "john", "smith", "went", "to",
         "paris", "##ian", "hello", "world", "a", "b", "c", "d"]
ID = {token: index for index, token in enumerate(VOCAB)}
LABEL = tagging_features.LABEL_IDS


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
  path = tmp_path_factory.mktemp("vocab") / "vocab.txt"
  path.write_text("\n".join(VOCAB) + "\n")
  return tokenization.FullTokenizer(str(path), do_lower_case=True)


def sentence(text, tags, document=0):
  return conll.Sentence(text.split(), tags.split(), document, 1)


def ids(*tokens):
  return [ID[token] for token in tokens]


def test_each_word_is_labelled_on_its_first_piece(tokenizer):
  features = tagging_features.convert_sentences(
      [sentence("John Parisian went", "I-PER I-MISC O")], tokenizer, 8)
  assert features["input_ids"].tolist() == [
      ids("[CLS]", "john", "paris", "##ian", "went", "[SEP]") + [0, 0]]
  assert features["input_mask"].tolist() == [[1] * 6 + [0, 0]]
  # IOB1 I-PER at an entity's start is trained as B-PER.
  assert features["label_ids"].tolist() == [
      [0, LABEL["B-PER"], LABEL["B-MISC"], 0, LABEL["O"], 0, 0, 0]]
  assert features["label_mask"].tolist() == [[0, 1, 1, 0, 1, 0, 0, 0]]
  assert features["word_ids"].tolist() == [[-1, 0, 1, -1, 2, -1, -1, -1]]
  assert features["segment_ids"].tolist() == [[0] * 8]
  assert features["is_real_example"].tolist() == [1]


def test_a_long_sentence_is_split_into_windows_of_whole_words(tokenizer):
  """Budget 3 pieces: every word predicted once, context from the rest of
  the sentence, a word's pieces never split between predictions."""
  features = tagging_features.convert_sentences(
      [sentence("a b Parisian c d", "O O I-MISC O O")], tokenizer, 5)
  # a b | Parisian c | d: the first window cannot end inside Parisian.
  assert features["input_ids"].tolist() == [
      ids("[CLS]", "a", "b", "paris", "[SEP]"),
      ids("[CLS]", "paris", "##ian", "c", "[SEP]"),
      ids("[CLS]", "##ian", "c", "d", "[SEP]")]
  assert features["word_ids"].tolist() == [
      [-1, 0, 1, -1, -1], [-1, 2, -1, 3, -1], [-1, -1, -1, 4, -1]]


def test_document_context_fills_from_the_neighbours(tokenizer):
  sentences = [sentence("a b", "O O"), sentence("John Smith", "I-PER I-PER"),
               sentence("c d", "O O"), sentence("hello", "O", document=1)]
  features = tagging_features.convert_sentences(sentences, tokenizer, 6,
                                                document_context=True)
  assert features["input_ids"].tolist() == [
      ids("[CLS]", "a", "b", "john", "smith", "[SEP]"),
      ids("[CLS]", "b", "john", "smith", "c", "[SEP]"),
      ids("[CLS]", "john", "smith", "c", "d", "[SEP]"),
      # another document: no context from the one before
      ids("[CLS]", "hello", "[SEP]") + [0, 0, 0]]
  assert features["word_ids"].tolist() == [
      [-1, 0, 1, -1, -1, -1], [-1, -1, 2, 3, -1, -1],
      [-1, -1, -1, 4, 5, -1], [-1, 6, -1, -1, -1, -1]]
  assert features["label_ids"][1].tolist() == [
      0, 0, LABEL["B-PER"], LABEL["I-PER"], 0, 0]
  without = tagging_features.convert_sentences(sentences, tokenizer, 6)
  assert without["input_ids"][1].tolist() == ids(
      "[CLS]", "john", "smith", "[SEP]") + [0, 0]


def test_odd_words_still_get_a_prediction(tokenizer):
  """A word tokenised to nothing becomes [UNK]; a word longer than the
  sequence keeps its first pieces."""
  features = tagging_features.convert_sentences(
      [sentence("\u200b Parisianian", "O I-LOC")], tokenizer, 4)
  assert features["input_ids"].tolist() == [
      ids("[CLS]", "[UNK]", "paris", "[SEP]"),
      ids("[CLS]", "paris", "##ian", "[SEP]")]
  assert features["word_ids"].tolist() == [[-1, 0, -1, -1], [-1, 1, -1, -1]]


def test_word_values_are_read_from_first_pieces(tokenizer):
  features = tagging_features.convert_sentences(
      [sentence("a b Parisian c d", "O O I-MISC O O")], tokenizer, 5)
  values = np.full(features["input_ids"].shape + (2,), -1.0)
  for row, position, value in ((0, 1, 10), (0, 2, 11), (1, 1, 12),
                               (1, 3, 13), (2, 3, 14)):
    values[row, position] = value
  (words,) = word_values(features, values)
  np.testing.assert_array_equal(
      words, [[10, 10], [11, 11], [12, 12], [13, 13], [14, 14]])
