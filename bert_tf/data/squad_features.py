"""SQuAD examples -> features, as the original's convert_examples_to_features.

Each question becomes one feature per doc_stride window of its context:
[CLS] question [SEP] window [SEP], the question cut to max_query_length
word pieces, windows of max_seq_length - len(question) - 3 pieces that start
doc_stride apart until one reaches the end. Each window token keeps the
context word it came from (token_to_orig) and whether this window is the
one giving it the most context (token_is_max_context, the original's rule:
the largest min(left, right) + 0.01 * window length, the first on ties).
For training, the answer's word span becomes a piece span, improved as the
original's _improve_answer_span does, and 0/0 when it is impossible or
outside the window.

The numbers are the original's; the work is not: a paragraph's words are
tokenised once for all its questions, the windows and their max-context
flags are computed once per window layout with numpy, and features are
written straight into arrays, so the whole of dev-v1.1.json converts in
about a second where the original takes many.
"""

import functools

import numpy as np

from bert_tf.tokenization_rules import CLS_TOKEN, SEP_TOKEN

# The original numbers features from here, so unique ids never collide
# with example indexes.
FIRST_UNIQUE_ID = 1000000000
# Written to train.tf_record, in the original's order (is_impossible only
# for training).
TRAIN_RECORD_FEATURES = ("unique_ids", "input_ids", "input_mask",
                         "segment_ids", "start_positions", "end_positions",
                         "is_impossible")
PREDICT_RECORD_FEATURES = ("unique_ids", "input_ids", "input_mask",
                           "segment_ids")


def check_lengths(max_seq_length, max_query_length, doc_stride):
  """Raises ValueError for lengths the windows cannot be made with."""
  if max_seq_length <= max_query_length + 3:
    raise ValueError(
        f"The max_seq_length ({max_seq_length}) must be greater than "
        f"max_query_length ({max_query_length}) + 3")
  if doc_stride < 1:
    raise ValueError(f"--doc_stride={doc_stride}: must be at least 1")


def convert_examples_to_features(examples, tokenizer, max_seq_length,
                                 doc_stride, max_query_length, is_training):
  """The original's features of these examples, as arrays.

  Returns:
    {name: numpy array}, one row per feature, in the original's order:
      unique_ids [F] (int64), example_index, doc_span_index [F];
      doc_span_start [F]: the context piece the window starts at;
      doc_offset [F]: the window's first position (after the question);
      input_ids, input_mask, segment_ids [F, max_seq_length];
      token_to_orig [F, max_seq_length]: the context word of each window
        token, -1 elsewhere (the original's token_to_orig_map);
      token_is_max_context [F, max_seq_length] (int8);
      for training, start_positions, end_positions and is_impossible [F];
      is_real_example [F] (all 1).

  Raises:
    ValueError: a question whose context has no word pieces, or lengths
      check_lengths refuses.
  """
  check_lengths(max_seq_length, max_query_length, doc_stride)
  words = _ParagraphPieces(tokenizer)
  layouts = functools.lru_cache(maxsize=None)(
      lambda num_pieces, window: _windows(num_pieces, window, doc_stride))
  plan = []  # (example index, query ids, pieces, windows) per example
  for example_index, example in enumerate(examples):
    pieces = words.of(example.paragraph)
    if not pieces.ids.size:
      raise ValueError(f"question {example.qas_id}: its context has no word "
                       f"pieces to answer from")
    query_ids = tokenizer.encode(example.question_text)[:max_query_length]
    window = max_seq_length - len(query_ids) - 3
    plan.append((example_index, query_ids, pieces,
                 layouts(len(pieces.ids), window)))

  num_features = sum(len(windows.starts) for *_, windows in plan)
  shape = (num_features, max_seq_length)
  features = {
      "unique_ids": FIRST_UNIQUE_ID + np.arange(num_features, dtype=np.int64),
      "example_index": np.zeros(num_features, np.int32),
      "doc_span_index": np.zeros(num_features, np.int32),
      "doc_span_start": np.zeros(num_features, np.int32),
      "doc_offset": np.zeros(num_features, np.int32),
      "input_ids": np.zeros(shape, np.int32),
      "input_mask": np.zeros(shape, np.int32),
      "segment_ids": np.zeros(shape, np.int32),
      "token_to_orig": np.full(shape, -1, np.int32),
      "token_is_max_context": np.zeros(shape, np.int8),
      "is_real_example": np.ones(num_features, np.int32),
  }
  if is_training:
    for name in ("start_positions", "end_positions", "is_impossible"):
      features[name] = np.zeros(num_features, np.int32)
  cls_id, sep_id = tokenizer.convert_tokens_to_ids([CLS_TOKEN, SEP_TOKEN])
  row = 0
  for example_index, query_ids, pieces, windows in plan:
    offset = len(query_ids) + 2  # the window's first position
    example = examples[example_index]
    if is_training:
      answer = _answer_pieces(example, pieces, tokenizer)
    for span_index, (start, length) in enumerate(zip(windows.starts,
                                                     windows.lengths)):
      end = offset + length
      features["example_index"][row] = example_index
      features["doc_span_index"][row] = span_index
      features["doc_span_start"][row] = start
      features["doc_offset"][row] = offset
      ids = features["input_ids"][row]
      ids[0] = cls_id
      ids[1:offset - 1] = query_ids
      ids[offset - 1] = sep_id
      ids[offset:end] = pieces.ids[start:start + length]
      ids[end] = sep_id
      features["input_mask"][row, :end + 1] = 1
      features["segment_ids"][row, offset:end + 1] = 1
      features["token_to_orig"][row, offset:end] = \
          pieces.tok_to_orig[start:start + length]
      features["token_is_max_context"][row, offset:end] = \
          windows.is_max_context[span_index]
      if is_training:
        _set_positions(features, row, example, answer, start, length, offset)
      row += 1
  return features


class _ParagraphPieces:
  """Each paragraph's word pieces, computed once for all its questions."""

  def __init__(self, tokenizer):
    self.tokenizer = tokenizer
    self.cache = {}
    # A word's pieces do not depend on its neighbours (the original
    # tokenises each word alone), so each distinct word is tokenised once.
    self.word_pieces = {}

  def of(self, paragraph):
    pieces = self.cache.get(id(paragraph))
    if pieces is None:
      pieces = self.cache[id(paragraph)] = _Pieces(
          paragraph.doc_tokens, self.tokenizer, self.word_pieces)
      # Keep the paragraph alive, so that its id is not reused.
      pieces.paragraph = paragraph
    return pieces


class _Pieces:
  """A context's word pieces: the original's all_doc_tokens,
  tok_to_orig_index and orig_to_tok_index."""

  def __init__(self, doc_tokens, tokenizer, word_pieces):
    self.tokens, tok_to_orig, self.orig_to_tok = [], [], []
    for index, word in enumerate(doc_tokens):
      self.orig_to_tok.append(len(self.tokens))
      pieces = word_pieces.get(word)
      if pieces is None:
        pieces = word_pieces[word] = tokenizer.tokenize(word)
      self.tokens.extend(pieces)
      tok_to_orig.extend([index] * len(pieces))
    self.ids = np.array(tokenizer.convert_tokens_to_ids(self.tokens),
                        np.int32)
    self.tok_to_orig = np.array(tok_to_orig, np.int32)


class _Windows:
  """The doc_stride windows over a context of some length."""

  def __init__(self, starts, lengths, is_max_context):
    self.starts = starts
    self.lengths = lengths
    self.is_max_context = is_max_context  # per window, [length] int8


def _windows(num_pieces, window, doc_stride):
  """The original's doc spans of num_pieces pieces, and for each window
  which of its tokens have their maximum context in it."""
  starts, lengths = [], []
  start = 0
  while start < num_pieces:
    length = min(num_pieces - start, window)
    starts.append(start)
    lengths.append(length)
    if start + length == num_pieces:
      break
    start += min(length, doc_stride)
  positions = np.arange(num_pieces)
  scores = np.full((len(starts), num_pieces), -np.inf)
  for index, (start, length) in enumerate(zip(starts, lengths)):
    inside = positions[start:start + length]
    scores[index, start:start + length] = (
        np.minimum(inside - start, start + length - 1 - inside)
        + 0.01 * length)
  best = np.argmax(scores, axis=0)  # the first window of the best score
  return _Windows(starts, lengths, [
      (best[start:start + length] == index).astype(np.int8)
      for index, (start, length) in enumerate(zip(starts, lengths))])


def _answer_pieces(example, pieces, tokenizer):
  """(first, last) piece of the training answer, or None if impossible."""
  if example.is_impossible:
    return None
  start = pieces.orig_to_tok[example.start_position]
  if example.end_position < len(example.doc_tokens) - 1:
    end = pieces.orig_to_tok[example.end_position + 1] - 1
  else:
    end = len(pieces.tokens) - 1
  return _improve_answer_span(pieces.tokens, start, end, tokenizer,
                              example.orig_answer_text)


def _improve_answer_span(doc_tokens, input_start, input_end, tokenizer,
                         orig_answer_text):
  """The narrowest piece span whose text is the tokenised answer ("1895"
  inside "(1895-1943)."), else the word span, as the original."""
  tok_answer_text = " ".join(tokenizer.tokenize(orig_answer_text))
  for new_start in range(input_start, input_end + 1):
    for new_end in range(input_end, new_start - 1, -1):
      if " ".join(doc_tokens[new_start:new_end + 1]) == tok_answer_text:
        return new_start, new_end
  return input_start, input_end


def _set_positions(features, row, example, answer, start, length, offset):
  """Training targets: the answer's positions in this window, 0/0 when it
  is impossible or not wholly inside."""
  features["is_impossible"][row] = int(example.is_impossible)
  if answer is None or not (answer[0] >= start
                            and answer[1] <= start + length - 1):
    return
  features["start_positions"][row] = answer[0] - start + offset
  features["end_positions"][row] = answer[1] - start + offset
