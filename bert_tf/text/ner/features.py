"""Tagged words -> BERT tagging features, as the paper tags (§5.3).

Each word is WordPiece-tokenised on its own and labelled on its first
piece; its other pieces carry no loss and no prediction (label_mask 0).
A sentence's words are predicted in one sequence, or, when its pieces do
not fit in max_seq_length - 2, in consecutive chunks of whole words, one
sequence each: every word is predicted exactly once, none is dropped.

Around the words it predicts, each sequence is filled with context:
the neighbouring pieces of the same sentence, or, with documents, of the
same document (the paper's "maximal document context"), split as evenly
as the text allows between the left and the right. Context pieces are
inputs only (label_mask 0).

Features (numpy, one row per sequence):
  input_ids, input_mask, segment_ids: [n, max_seq_length] int32.
  label_ids: [n, max_seq_length] int32, the label id of each predicted
    word on its first piece (0 elsewhere).
  label_mask: [n, max_seq_length] int32, 1 on those positions.
  word_ids: [n, max_seq_length] int32, the position of the predicted word
    among all the words (sentence after sentence), -1 elsewhere.
  is_real_example: [n] int32, 1.
"""

import logging

import numpy as np
import tensorflow as tf

from bert_tf.wordpiece.rules import CLS_TOKEN, SEP_TOKEN, UNK_TOKEN

logger = logging.getLogger(__name__)


def convert_words(sentences, label_ids, tokenizer, max_seq_length,
                  documents=None):
  """Features for every word of `sentences`.

  Args:
    sentences: [sentences] lists of words.
    label_ids: [sentences] lists of each word's label id.
    tokenizer: a FullTokenizer, or an InGraphTokenizer (a preprocessor's).
    max_seq_length: the sequence length, [CLS] and [SEP] included (>= 3).
    documents: [sentences] each one's document, to fill sequences from the
      whole document; None: from the sentence alone.
  """
  if max_seq_length < 3:
    raise ValueError(f"max_seq_length={max_seq_length}: a tagging "
                     f"sequence needs at least 3 positions")
  budget = max_seq_length - 2
  word_pieces = _WordPieces(tokenizer, budget, sentences)
  rows, split_sentences = [], 0
  first_word = 0
  for scope in _scopes(len(sentences), documents):
    pieces, piece_words, sentence_starts = [], [], []
    for index in scope:
      sentence_starts.append(len(pieces))
      for position, word in enumerate(sentences[index]):
        ids = word_pieces(word)
        pieces += ids
        piece_words += [first_word + position] + [-1] * (len(ids) - 1)
      first_word += len(sentences[index])
    sentence_starts.append(len(pieces))
    for start, end in zip(sentence_starts, sentence_starts[1:]):
      chunks = _chunks(piece_words, start, end, budget)
      split_sentences += len(chunks) > 1
      for chunk_start, chunk_end in chunks:
        lo, hi = (0, len(pieces)) if documents is not None else (start, end)
        left, right = _context(chunk_start, chunk_end, lo, hi, budget)
        rows.append((pieces[left:right], piece_words[left:right],
                     chunk_start - left, chunk_end - left))
  labels = [label for sentence in label_ids for label in sentence]
  features = _assemble(rows, labels, max_seq_length,
                       tokenizer.vocab[CLS_TOKEN], tokenizer.vocab[SEP_TOKEN])
  logger.info("%d sentences -> %d sequences (%d sentences of more than %d "
              "pieces split into windows)", len(sentences), len(rows),
              split_sentences, budget)
  if word_pieces.truncated:
    logger.warning("%d words have more than %d pieces; their extra pieces "
                   "are dropped (each still gets a prediction)",
                   word_pieces.truncated, budget)
  return features


class _WordPieces:
  """A word's piece ids (CoNLL words repeat: each distinct word is
  tokenised once), at most `budget` of them; a word tokenised to nothing
  (control characters) is [UNK], so that it still gets a position and a
  prediction. An InGraphTokenizer tokenises all the distinct words in one
  call."""

  def __init__(self, tokenizer, budget, sentences):
    self.tokenizer = tokenizer
    self.budget = budget
    self.truncated = 0
    self._cache = {}
    if hasattr(tokenizer, "tokenize_ids"):
      words = list(dict.fromkeys(word for sentence in sentences
                                 for word in sentence))
      ids = tokenizer.tokenize_ids(tf.constant(words, tf.string)) if words \
          else []
      for word, word_ids in zip(words, ids):
        self._remember(word, word_ids.numpy().tolist())

  def _remember(self, word, ids):
    ids = ids or [self.tokenizer.vocab[UNK_TOKEN]]
    self.truncated += len(ids) > self.budget
    self._cache[word] = ids = ids[:self.budget]
    return ids

  def __call__(self, word):
    ids = self._cache.get(word)
    if ids is None:
      ids = self._remember(word, self.tokenizer.convert_tokens_to_ids(
          self.tokenizer.tokenize(word)))
    return ids


def _scopes(count, documents):
  """Groups of consecutive sentences (their indexes) that may lend each
  other context: documents, or single sentences."""
  if documents is None:
    return [[index] for index in range(count)]
  scopes = []
  for index in range(count):
    if scopes and documents[scopes[-1][-1]] == documents[index]:
      scopes[-1].append(index)
    else:
      scopes.append([index])
  return scopes


def _chunks(piece_words, start, end, budget):
  """[start, end) of the sentence's pieces cut at word starts into spans
  of at most `budget` pieces."""
  spans, chunk_start, position = [], start, start
  while position < end:
    word_end = position + 1
    while word_end < end and piece_words[word_end] < 0:
      word_end += 1
    if word_end - chunk_start > budget:
      spans.append((chunk_start, position))
      chunk_start = position
    position = word_end
  spans.append((chunk_start, end))
  return spans


def _context(chunk_start, chunk_end, lo, hi, budget):
  """[left, right) around the chunk within [lo, hi), at most `budget`
  pieces: the room shared evenly, a side short of text giving the rest
  to the other."""
  room = budget - (chunk_end - chunk_start)
  left = min(chunk_start - lo, max(room // 2, room - (hi - chunk_end)))
  right = min(hi - chunk_end, room - left)
  return chunk_start - left, chunk_end + right


def _assemble(rows, labels, max_seq_length, cls_id, sep_id):
  """The feature arrays of (pieces, piece words, chunk start, chunk end)
  rows; chunk positions are relative to the row's pieces."""
  count = len(rows)
  shape = (count, max_seq_length)
  input_ids = np.zeros(shape, np.int32)
  input_mask = np.zeros(shape, np.int32)
  word_ids = np.full(shape, -1, np.int32)
  for row, (pieces, piece_words, chunk_start, chunk_end) in enumerate(rows):
    length = len(pieces) + 2
    input_ids[row, :length] = [cls_id, *pieces, sep_id]
    input_mask[row, :length] = 1
    word_ids[row, 1 + chunk_start:1 + chunk_end] = \
        piece_words[chunk_start:chunk_end]
  label_mask = (word_ids >= 0).astype(np.int32)
  label_ids = np.where(label_mask == 1,
                       np.asarray(labels, np.int32)[np.maximum(word_ids, 0)],
                       0).astype(np.int32)
  return {"input_ids": input_ids, "input_mask": input_mask,
          "segment_ids": np.zeros(shape, np.int32), "label_ids": label_ids,
          "label_mask": label_mask, "word_ids": word_ids,
          "is_real_example": np.ones(count, np.int32)}


def word_values(features, *values):
  """Each of `values` [n, max_seq_length, ...] (the model's outputs on the
  features, or a feature) at each word's first piece: [number of words,
  ...], in word order; one array per argument."""
  positions = features["word_ids"] >= 0
  order = np.argsort(features["word_ids"][positions])
  return tuple(np.asarray(value)[positions][order] for value in values)
