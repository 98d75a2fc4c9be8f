"""CoNLL sentences -> BERT tagging features, as the paper tags (§5.3).

Each word is WordPiece-tokenised on its own and labelled on its first
piece; its other pieces carry no loss and no prediction (label_mask 0).
A sentence's words are predicted in one sequence, or, when its pieces do
not fit in max_seq_length - 2, in consecutive chunks of whole words, one
sequence each: every word is predicted exactly once, none is dropped.

Around the words it predicts, each sequence is filled with context:
the neighbouring pieces of the same sentence, or, with document_context,
of the same document (the paper's "maximal document context"), split as
evenly as the text allows between the left and the right. Context pieces
are inputs only (label_mask 0).

Features (numpy, one row per sequence):
  input_ids, input_mask, segment_ids: [n, max_seq_length] int32.
  label_ids: [n, max_seq_length] int32, the IOB2 label id of each
    predicted word on its first piece (0 elsewhere).
  label_mask: [n, max_seq_length] int32, 1 on those positions.
  word_ids: [n, max_seq_length] int32, the position of the predicted word
    among the split's words (sentence after sentence), -1 elsewhere.
  is_real_example: [n] int32, 1.
"""

import logging

import numpy as np

from bert_tf.tasks.ner import examples as conll
from bert_tf.wordpiece.rules import CLS_TOKEN, SEP_TOKEN, UNK_TOKEN

logger = logging.getLogger(__name__)

LABEL_IDS = {label: index for index, label in enumerate(conll.LABELS)}


def convert_sentences(sentences, tokenizer, max_seq_length,
                      document_context=False):
  """Features for every word of `sentences` (conll.Sentence, file order).

  Args:
    sentences: the split's sentences.
    tokenizer: a FullTokenizer.
    max_seq_length: the sequence length, [CLS] and [SEP] included (>= 3).
    document_context: fill sequences from the whole document, not only
      the sentence.
  """
  if max_seq_length < 3:
    raise ValueError(f"--max_seq_length={max_seq_length}: a tagging "
                     f"sequence needs at least 3 positions")
  budget = max_seq_length - 2
  word_pieces = _WordPieces(tokenizer, budget)
  rows, split_sentences = [], 0
  first_word = 0
  for scope in _scopes(sentences, document_context):
    pieces, piece_words, sentence_starts = [], [], []
    for sentence in scope:
      sentence_starts.append(len(pieces))
      for position, word in enumerate(sentence.words):
        ids = word_pieces(word)
        pieces += ids
        piece_words += [first_word + position] + [-1] * (len(ids) - 1)
      first_word += len(sentence.words)
    sentence_starts.append(len(pieces))
    for start, end in zip(sentence_starts, sentence_starts[1:]):
      chunks = _chunks(piece_words, start, end, budget)
      split_sentences += len(chunks) > 1
      for chunk_start, chunk_end in chunks:
        lo, hi = (0, len(pieces)) if document_context else (start, end)
        left, right = _context(chunk_start, chunk_end, lo, hi, budget)
        rows.append((pieces[left:right], piece_words[left:right],
                     chunk_start - left, chunk_end - left))
  labels = [LABEL_IDS[tag] for sentence in sentences
            for tag in conll.to_iob2(sentence.tags)]
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
  """A word's piece ids, cached (CoNLL words repeat), at most `budget` of
  them; a word tokenised to nothing (control characters) is [UNK], so
  that it still gets a position and a prediction."""

  def __init__(self, tokenizer, budget):
    self.tokenizer = tokenizer
    self.budget = budget
    self.truncated = 0
    self._cache = {}

  def __call__(self, word):
    ids = self._cache.get(word)
    if ids is None:
      tokens = self.tokenizer.tokenize(word) or [UNK_TOKEN]
      ids = self.tokenizer.convert_tokens_to_ids(tokens)
      self._cache[word] = ids = ids[:self.budget]
      self.truncated += len(tokens) > self.budget
    return ids


def _scopes(sentences, document_context):
  """Groups of consecutive sentences that may lend each other context:
  documents, or single sentences."""
  if not document_context:
    return [[sentence] for sentence in sentences]
  scopes = []
  for sentence in sentences:
    if scopes and scopes[-1][-1].document == sentence.document:
      scopes[-1].append(sentence)
    else:
      scopes.append([sentence])
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
