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
flags are computed once per window layout with numpy, and every feature's
rows are gathered at once from the questions' and contexts' pieces, so the
whole of dev-v1.1.json converts over ten times faster than with the
original (benchmarks/squad.py).
"""

import functools

import numpy as np

from bert_tf.wordpiece.rules import CLS_TOKEN, SEP_TOKEN

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
      paragraph_index [F]: which distinct context (numbered in order);
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
  paragraphs = _ParagraphPieces(tokenizer)
  layouts = functools.lru_cache(maxsize=None)(
      lambda num_pieces, window: _windows(num_pieces, window, doc_stride))
  windows = _FeatureWindows()
  query_ids = []
  for example_index, example in enumerate(examples):
    pieces = paragraphs.of(example.paragraph)
    if not pieces.ids.size:
      raise ValueError(f"question {example.qas_id}: its context has no word "
                       f"pieces to answer from")
    query_ids.append(
        tokenizer.encode(example.question_text)[:max_query_length])
    windows.add(example_index, len(query_ids[-1]), pieces, layouts(
        len(pieces.ids), max_seq_length - len(query_ids[-1]) - 3))
  windows = windows.arrays()
  cls_id, sep_id = tokenizer.convert_tokens_to_ids([CLS_TOKEN, SEP_TOKEN])
  features = _assemble(windows, query_ids, paragraphs, max_seq_length,
                       cls_id, sep_id)
  if is_training:
    features.update(_training_positions(examples, paragraphs, windows,
                                        tokenizer))
  return features


class _FeatureWindows:
  """What each feature is: its example, its window of the context."""

  def __init__(self):
    self.columns = {name: [] for name in (
        "example_index", "paragraph_index", "doc_span_index",
        "doc_span_start", "doc_offset", "length", "piece_base")}
    self.is_max_context = []

  def add(self, example_index, query_length, pieces, layout):
    count = len(layout.starts)
    self.columns["example_index"] += [example_index] * count
    self.columns["paragraph_index"] += [pieces.index] * count
    self.columns["doc_span_index"] += range(count)
    self.columns["doc_span_start"] += layout.starts
    self.columns["doc_offset"] += [query_length + 2] * count
    self.columns["length"] += layout.lengths
    self.columns["piece_base"] += [pieces.base] * count
    self.is_max_context += layout.is_max_context

  def arrays(self):
    arrays = {name: np.array(values, np.int32)
              for name, values in self.columns.items()}
    arrays["is_max_context"] = np.concatenate(self.is_max_context)
    return arrays


def _assemble(windows, query_ids, paragraphs, max_seq_length, cls_id,
              sep_id):
  """[CLS] question [SEP] window [SEP] and its maps, for every feature at
  once: each position gathers from the questions' or the contexts' pieces.
  """
  num_features = len(windows["example_index"])
  position = np.arange(max_seq_length)[None, :]
  offset = windows["doc_offset"][:, None]
  end = offset + windows["length"][:, None]  # the final [SEP]
  in_query = (position >= 1) & (position < offset - 1)
  in_window = (position >= offset) & (position < end)
  query_base = np.cumsum([0] + [len(ids) for ids in query_ids])[
      windows["example_index"]][:, None]
  all_query_ids = np.array([i for ids in query_ids for i in ids] or [0],
                           np.int32)
  piece = np.where(in_window, windows["piece_base"][:, None]
                   + windows["doc_span_start"][:, None] + position - offset, 0)
  max_context_base = np.cumsum(np.concatenate(
      [[0], windows["length"][:-1]]))[:, None]
  input_ids = np.where(in_window, paragraphs.all_ids()[piece], 0)
  input_ids = np.where(in_query, all_query_ids[np.where(
      in_query, query_base + position - 1, 0)], input_ids)
  input_ids[:, 0] = cls_id
  input_ids = np.where((position == offset - 1) | (position == end), sep_id,
                       input_ids)
  return {
      "unique_ids": FIRST_UNIQUE_ID + np.arange(num_features, dtype=np.int64),
      "example_index": windows["example_index"],
      "doc_span_index": windows["doc_span_index"],
      "paragraph_index": windows["paragraph_index"],
      "doc_span_start": windows["doc_span_start"],
      "doc_offset": windows["doc_offset"],
      "input_ids": input_ids.astype(np.int32),
      "input_mask": (position <= end).astype(np.int32),
      "segment_ids": ((position >= offset) & (position <= end)).astype(
          np.int32),
      "token_to_orig": np.where(in_window, paragraphs.all_tok_to_orig()[piece],
                                -1).astype(np.int32),
      "token_is_max_context": np.where(in_window, windows["is_max_context"][
          np.where(in_window, max_context_base + position - offset, 0)],
                                       0).astype(np.int8),
      "is_real_example": np.ones(num_features, np.int32),
  }


def _training_positions(examples, paragraphs, windows, tokenizer):
  """start_positions, end_positions, is_impossible: the answer's positions
  in each window, 0/0 when it is impossible or not wholly inside."""
  answers = np.array([
      _answer_pieces(example, paragraphs.of(example.paragraph), tokenizer)
      or (-1, -1) for example in examples], np.int32).reshape(-1, 2)
  impossible = np.array([example.is_impossible for example in examples],
                        np.int32)[windows["example_index"]]
  first, last = answers[windows["example_index"]].T
  start = windows["doc_span_start"]
  inside = ((impossible == 0) & (first >= start)
            & (last <= start + windows["length"] - 1))
  shift = windows["doc_offset"] - start
  return {"start_positions": np.where(inside, first + shift, 0),
          "end_positions": np.where(inside, last + shift, 0),
          "is_impossible": impossible}


class _ParagraphPieces:
  """Each paragraph's word pieces, computed once for all its questions."""

  def __init__(self, tokenizer):
    self.tokenizer = tokenizer
    self.cache = {}
    self.num_pieces = 0  # of the paragraphs so far, one after another
    # A word's pieces do not depend on its neighbours (the original
    # tokenises each word alone), so each distinct word is tokenised once.
    self.word_pieces = {}

  def of(self, paragraph):
    pieces = self.cache.get(id(paragraph))
    if pieces is None:
      pieces = self.cache[id(paragraph)] = _Pieces(
          paragraph, self.tokenizer, self.word_pieces,
          index=len(self.cache), base=self.num_pieces)
      self.num_pieces += len(pieces.ids)
    return pieces

  def all_ids(self):
    """Every paragraph's piece ids, one after another (see _Pieces.base)."""
    return np.concatenate([pieces.ids for pieces in self.cache.values()])

  def all_tok_to_orig(self):
    return np.concatenate([pieces.tok_to_orig
                           for pieces in self.cache.values()])


class _Pieces:
  """A context's word pieces: the original's all_doc_tokens,
  tok_to_orig_index and orig_to_tok_index; the paragraph's number among
  the distinct ones (index) and where its pieces start among all of theirs
  (base)."""

  def __init__(self, paragraph, tokenizer, word_pieces, index, base):
    self.paragraph = paragraph  # kept alive, so that its id is not reused
    self.index = index
    self.base = base
    self.tokens, tok_to_orig, self.orig_to_tok = [], [], []
    for position, word in enumerate(paragraph.doc_tokens):
      self.orig_to_tok.append(len(self.tokens))
      pieces = word_pieces.get(word)
      if pieces is None:
        pieces = word_pieces[word] = tokenizer.tokenize(word)
      self.tokens.extend(pieces)
      tok_to_orig.extend([position] * len(pieces))
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
