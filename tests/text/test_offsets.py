"""tokenize_with_offsets: FullTokenizer's pieces, each with the characters of
the text as sent that it came from."""

import pytest
import tensorflow as tf

from bert_tf.text.offsets import tokenize_with_offsets
from bert_tf.text.tokenizer import InGraphTokenizer, clean_and_split
from tests.support.tokenization_cases import (
                                              for_every_vocab_and_adversarial_texts)
from tests.text.test_tokenizer import exact_ids, tokenizers


def offsets_of(in_graph, texts):
  """[(word, start, end, [(piece id, start, end)])] for each text."""
  tokenized = tokenize_with_offsets(
      in_graph, tf.constant([text.encode("utf-8") for text in texts]))
  words = tokenized.words
  return [[(word.decode("utf-8"), start, end, list(zip(*pieces)))
           for word, start, end, *pieces in zip(*row)]
          for row in zip(words.words.to_list(), words.word_starts.to_list(),
                         words.word_ends.to_list(), tokenized.ids.to_list(),
                         tokenized.starts.to_list(),
                         tokenized.ends.to_list())]


def fold_sigma(text):
  # A final sigma depends on what follows, which a word cut out of its
  # text no longer has.
  return text.replace("\u03c2", "\u03c3")


@for_every_vocab_and_adversarial_texts(max_examples=25)
def test_pieces_are_the_tokenizers_and_offsets_cover_them(name, lower, texts):
  exact, in_graph = tokenizers(name, lower)
  fast_words = clean_and_split(
      tf.constant([text.encode("utf-8") for text in texts]), lower).to_list()
  for text, row, fast in zip(texts, offsets_of(in_graph, texts), fast_words):
    assert [piece for *_, pieces in row for piece, _, _ in pieces] == \
        exact_ids(exact, text), repr(text)
    assert [word.encode("utf-8") for word, *_ in row] == fast, repr(text)
    previous_end = 0
    for word, start, end, pieces in row:
      assert previous_end <= start < end <= len(text), repr(text)
      previous_end = end
      # The word is what the original makes of its characters alone.
      assert [fold_sigma(token) for token in
              exact.basic_tokenizer.tokenize(text[start:end])] == [
                  fold_sigma(word)], (repr(text), word)
      # Its pieces tile it (two pieces of one character share it).
      assert pieces[0][1] == start and pieces[-1][2] == end
      for (_, _, end_a), (_, start_b, _) in zip(pieces, pieces[1:]):
        assert end_a - 1 <= start_b <= end_a, (repr(text), word, pieces)


def test_offsets_are_characters_of_the_text_as_sent():
  _, in_graph = tokenizers("bert-base-multilingual-cased-vocab.txt", True)
  text = ("Ça\u0301fé\u00ad-Straße  ΟΔΟΣ, 東京😀x "
          "naïve\u200bly \U0001f44d\U0001f3fb" + "b" * 201 + "!")
  row = offsets_of(in_graph, [text])[0]
  spans = [text[start:end] for _, start, end, _ in row]
  assert spans == ["Ça\u0301fé\u00ad", "-", "Straße", "ΟΔΟΣ", ",", "東",
                   "京", "😀x", "naïve\u200bly",
                   "\U0001f44d\U0001f3fb" + "b" * 201, "!"]
  assert [word for word, *_ in row][:4] == ["cafe", "-", "straße", "οδος"]
  # The pieces' characters; the overlong word is one [UNK] spanning it.
  names = {index: token for token, index in in_graph.vocab.items()}
  pieces = [(names[piece], text[start:end])
            for *_, word_pieces in row for piece, start, end in word_pieces]
  assert pieces[-2] == ("[UNK]", spans[-2])
  assert all(
          piece == "[UNK]" or exact_piece(piece, source)
          for piece, source in pieces), pieces


def exact_piece(piece, source):
  """Whether a piece is what its characters normalise to."""
  exact, _ = tokenizers("bert-base-multilingual-cased-vocab.txt", True)
  return "".join(exact.basic_tokenizer.tokenize(source)) == \
      piece.removeprefix("##")


def test_lower_case_off_keeps_the_characters():
  _, in_graph = tokenizers("bert-base-cased-vocab.txt", False)
  text = "Café\u0301 ΟΔΟΣ\tx\u00a0y"
  row = offsets_of(in_graph, [text])[0]
  assert [(word, text[start:end]) for word, start, end, _ in row] == [
      ("Café\u0301", "Café\u0301"), ("ΟΔΟΣ", "ΟΔΟΣ"), ("x", "x"),
      ("y", "y")]


def test_empty_and_blank_texts_have_no_words():
  _, in_graph = tokenizers("bert-base-uncased-vocab.txt", True)
  assert offsets_of(in_graph, ["", " \t\u200b ", "a"])[:2] == [[], []]


def test_invalid_utf8_is_refused():
  _, in_graph = tokenizers("bert-base-uncased-vocab.txt", True)
  with pytest.raises(tf.errors.InvalidArgumentError):
    tokenize_with_offsets(in_graph, tf.constant([b"ok", b"\xff"]))


def test_a_tokenizer_of_transformers_rules_is_refused(tmp_path):
  """Offsets follow the original's words; a tokenizer that keeps special
  tokens whole would answer with other ones."""
  vocab = tmp_path / "vocab.txt"
  vocab.write_text("[UNK]\n[MASK]\na\n")
  in_graph = InGraphTokenizer(str(vocab), True, "transformers")
  with pytest.raises(ValueError, match="^tokenize_with_offsets: the "
                     "tokenizer follows transformers' rules"):
    tokenize_with_offsets(in_graph, tf.constant(["a [MASK]"]))
