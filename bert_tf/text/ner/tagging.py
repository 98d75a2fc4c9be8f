"""Raw text -> words, a tag per word, and the entities, in TensorFlow ops:
run_ner's export's serve_text and BertTagger's raw-text path.

The text is split into words as BasicTokenizer does (with their
characters in the text as sent), and tagged as run_ner --nodocument_context
tags one sentence (features.convert_words): each word's pieces, at most
max_seq_length - 2 of them; the words in one sequence, or in consecutive
chunks of whole words with the sentence's other pieces around them as
context; each word's tag from its first piece. Entities are read from the
tags as conlleval reads them: one starts at B-, or at I- after O or after
another type, and runs over the I- of its type after it.
"""

import tensorflow as tf

from bert_tf.text.offsets import first_of_row, tokenize_words
from bert_tf.wordpiece.rules import CLS_TOKEN, SEP_TOKEN


def tag_texts(model, tokenizer, max_seq_length, labels, texts):
  """Each text's words, their tags and its entities.

  Args:
    model: a tagger, called on ids (in inference mode) for probabilities.
    tokenizer: an InGraphTokenizer.
    max_seq_length: the sequences' length (>= 3).
    labels: the tags, in the order of the model's probabilities.
    texts: [batch] valid UTF-8 strings.

  Returns:
    {name: [batch, most words] tensor}, padded with "" (-1, 0.0): words,
    word_start, word_end (character offsets into the text as sent, end
    exclusive), tags, tag_probability (the model's probability of each
    tag); and [batch, most entities] entity_type, entity_text,
    entity_start, entity_end.
  """
  tokenized = tokenize_words(tokenizer, texts)
  words = tokenized.words
  budget = max_seq_length - 2
  # [words, (pieces)], each word's first `budget`, as run_ner keeps them.
  word_ids = tokenized.ids.values[:, :budget]
  probabilities = _word_probabilities(model, tokenizer, max_seq_length,
                                      word_ids, words.words)
  tags = words.words.with_flat_values(tf.gather(
      tf.constant(list(labels)), tf.argmax(probabilities, axis=-1)))
  tag_probability = words.words.with_flat_values(
      tf.reduce_max(probabilities, axis=-1))
  entities = _entities(tags, words.word_starts, words.word_ends, texts)
  padded = lambda values, default: values.to_tensor(default)
  starts, ends = words.word_starts.flat_values, words.word_ends.flat_values
  return {
      "words": padded(words.words.with_flat_values(tf.strings.substr(
          tf.gather(texts, words.words.value_rowids()), starts,
          ends - starts, unit="UTF8_CHAR")), ""),
      "word_start": padded(words.word_starts, -1),
      "word_end": padded(words.word_ends, -1),
      "tags": padded(tags, ""),
      "tag_probability": padded(tag_probability, 0.0),
      **{name: padded(value, "" if value.dtype == tf.string else -1)
         for name, value in entities.items()},
  }


def _word_probabilities(model, tokenizer, max_seq_length, word_ids, words):
  """[words, labels]: each word's first piece's probabilities, every
  text tagged as one run_ner sentence."""
  budget = max_seq_length - 2
  lengths = word_ids.row_lengths()
  texts = words.value_rowids()
  chunk = _chunk_numbers(lengths, first_of_row(words), budget)
  # Each word's first piece among its text's pieces.
  piece_base = tf.math.cumsum(lengths, exclusive=True)
  text_piece_base = tf.math.unsorted_segment_min(piece_base, texts,
                                                 words.nrows())
  word_start = piece_base - tf.gather(text_piece_base, texts)
  text_pieces = tf.math.unsorted_segment_sum(lengths, texts, words.nrows())
  num_chunks = tf.reduce_max(tf.concat([[-1], chunk], 0)) + 1
  chunk_start = tf.math.unsorted_segment_min(word_start, chunk, num_chunks)
  chunk_end = tf.math.unsorted_segment_max(word_start + lengths, chunk,
                                           num_chunks)
  chunk_text = tf.math.unsorted_segment_min(texts, chunk, num_chunks)
  # The room left, shared evenly by the two sides (features._context).
  hi = tf.gather(text_pieces, chunk_text)
  room = budget - (chunk_end - chunk_start)
  left_room = tf.minimum(chunk_start, tf.maximum(room // 2,
                                                 room - (hi - chunk_end)))
  left = chunk_start - left_room
  right = chunk_end + tf.minimum(hi - chunk_end, room - left_room)
  position = tf.range(max_seq_length, dtype=tf.int64)[None, :]
  piece = left[:, None] + position - 1
  inside = (position >= 1) & (piece < right[:, None])
  all_pieces = tf.concat([word_ids.flat_values, [0]], 0)
  flat_piece = tf.gather(text_piece_base, chunk_text)[:, None] + piece
  input_ids = tf.where(inside, tf.cast(tf.gather(
      all_pieces, tf.where(inside, flat_piece, 0)), tf.int32), 0)
  length = right - left + 2
  input_ids = tf.where(position == 0, tokenizer.vocab[CLS_TOKEN], input_ids)
  input_ids = tf.where(position == length[:, None] - 1,
                       tokenizer.vocab[SEP_TOKEN], input_ids)
  inputs = {"input_ids": input_ids,
            "input_mask": tf.cast(position < length[:, None], tf.int32),
            "segment_ids": tf.zeros_like(input_ids, tf.int32)}
  probabilities = model(inputs, training=False)["probabilities"]
  return tf.gather_nd(probabilities, tf.stack(
      [chunk, word_start - tf.gather(left, chunk) + 1], axis=1))


def _chunk_numbers(lengths, first_of_text, budget):
  """[words]: the sequence each word is tagged in, numbered over the
  batch: a text's words go in one sequence until the next word would
  take it over `budget` pieces (features._chunks)."""

  def step(state, word):
    pieces, number = state
    length, first = word
    new = first | (pieces + length > budget)
    return (tf.where(new, length, pieces + length),
            tf.where(new, number + 1, number))

  _, numbers = tf.scan(step, (lengths, first_of_text),
                       initializer=(tf.constant(0, tf.int64),
                                    tf.constant(-1, tf.int64)))
  return numbers


def _entities(tags, word_starts, word_ends, text):
  """Entities of [batch, (words)] IOB tags as conlleval reads them:
  {entity_type, entity_text, entity_start, entity_end}, [batch,
  (entities)]."""
  flat = tags.flat_values
  inside = tf.not_equal(flat, "O")
  kind = tf.where(inside, tf.strings.regex_replace(flat, "^[BI]-", ""), "")
  previous_kind = tf.concat([[""], kind], 0)[:-1]
  begins = inside & (tf.strings.regex_full_match(flat, "B-.*")
                     | first_of_row(tags) | tf.not_equal(kind, previous_kind))
  number = tf.math.cumsum(tf.cast(begins, tf.int64)) - 1
  tagged = tf.where(inside)[:, 0]
  count = tf.reduce_sum(tf.cast(begins, tf.int64))
  first_word = tf.boolean_mask(tf.range(tf.size(flat, tf.int64)), begins)
  last_word = tf.math.unsorted_segment_max(
      tagged, tf.gather(number, tagged), count)
  rows = tf.gather(tags.value_rowids(), first_word)
  start = tf.gather(word_starts.flat_values, first_word)
  end = tf.gather(word_ends.flat_values, last_word)
  by_text = lambda values: tf.RaggedTensor.from_value_rowids(
      values, rows, nrows=tags.nrows())
  return {
      "entity_type": by_text(tf.gather(kind, first_word)),
      "entity_text": by_text(tf.strings.substr(
          tf.gather(text, rows), start, end - start, unit="UTF8_CHAR")),
      "entity_start": by_text(start),
      "entity_end": by_text(end),
  }
