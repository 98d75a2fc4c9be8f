"""A span of a feature's word pieces -> its answer text in the original
context, as the original's get_final_text: the words the pieces cover, cut
to the part the normalised prediction covers (not "Smith's" for "smith"),
or all of them when the alignment fails.

Each paragraph's words are basic-tokenized once, each word once, and each
distinct span aligned once (AnswerTexts.cache), however many questions and
overlapping windows share it.
"""

import bisect
import logging

import numpy as np

logger = logging.getLogger(__name__)


class AnswerTexts:
  """The original text of a feature's piece span; `cache` keeps each
  span's, so that it is aligned once."""

  def __init__(self, examples, features, tokenizer, options):
    self.examples = examples
    # Every feature's word pieces, as one gather (str objects, not copies).
    vocabulary = np.empty(max(tokenizer.inv_vocab) + 1, object)
    for index, piece in tokenizer.inv_vocab.items():
      vocabulary[index] = piece
    self.tokens = vocabulary[features["input_ids"]]
    self.tokenizer = tokenizer
    self.options = options
    self.paragraphs = {}  # id(paragraph) -> _ParagraphText
    self.word_tokens = {}  # word -> its basic tokens, joined by spaces
    self.cache = {}  # span key (answers._Candidates) -> text

  def of(self, example_index, feature, start, end, orig_start, orig_end):
    """The answer text of positions start..end of a feature, which are of
    words orig_start..orig_end of its paragraph."""
    tok_text = " ".join(self.tokens[feature, start:end + 1].tolist())
    # De-tokenize WordPieces that have been split off; clean whitespace.
    tok_text = " ".join(tok_text.replace(" ##", "").replace("##", "")
                        .split())
    return self.final_text(
        tok_text, self.paragraph_text(self.examples[example_index].paragraph),
        orig_start, orig_end)

  def paragraph_text(self, paragraph):
    text = self.paragraphs.get(id(paragraph))
    if text is None:
      text = self.paragraphs[id(paragraph)] = _ParagraphText(
          paragraph, self.word_tokens_of)
    return text

  def final_text(self, pred_text, paragraph, first, last):
    """The original's get_final_text(pred_text, orig_text) for the words
    first..last: the part of them that the normalised prediction covers
    (not "Smith's" for "smith"), or all of them when the alignment fails."""
    orig_text = " ".join(paragraph.words[first:last + 1])
    tok_text = paragraph.tokens_text(first, last)
    if pred_text == tok_text:  # the span is whole words: all of them
      if not self.options.verbose_logging:
        return orig_text
    start = tok_text.find(pred_text)
    if start == -1:
      self.log("Unable to find text: '%s' in '%s'", pred_text, orig_text)
      return orig_text
    end = start + len(pred_text) - 1
    if (paragraph.char_ends[last + 1] - paragraph.char_ends[first]
        != len(tok_text) - tok_text.count(" ")):
      self.log("Length not equal after stripping spaces: '%s' vs '%s'",
               orig_text.replace(" ", ""), tok_text.replace(" ", ""))
      return orig_text
    # Characters align one to one once spaces are stripped: map the
    # prediction's first and last character through that alignment.
    positions = []
    for name, position in (("start", start), ("end", end)):
      if not 0 <= position < len(tok_text) or tok_text[position] == " ":
        self.log("Couldn't map %s position", name)
        return orig_text
      positions.append(paragraph.orig_position(
          first, position - tok_text.count(" ", 0, position)))
    return orig_text[positions[0]:positions[1] + 1]

  def word_tokens_of(self, word):
    tokens = self.word_tokens.get(word)
    if tokens is None:
      tokens = self.word_tokens[word] = " ".join(
          self.tokenizer.basic_tokenize(word))
    return tokens

  def log(self, message, *args):
    if self.options.verbose_logging:
      logger.info(message, *args)


class _ParagraphText:
  """A context's words with their basic tokens, and where each word's
  characters begin, for aligning any span of words."""

  def __init__(self, paragraph, word_tokens_of):
    self.words = paragraph.doc_tokens
    # The basic tokenizer splits each word on its own, so a span's tokens
    # are its words' tokens in order.
    self.word_tokens = [word_tokens_of(word) for word in self.words]
    self.char_ends = [0]  # non-space characters before each word
    for word in self.words:
      self.char_ends.append(self.char_ends[-1] + len(word))

  def tokens_text(self, first, last):
    """" ".join(basic_tokenize(" ".join(words[first:last + 1])))."""
    return " ".join(filter(None, self.word_tokens[first:last + 1]))

  def orig_position(self, first, index):
    """Where the index-th non-space character of " ".join(words[first:
    last + 1]) is: the spaces before it are one per word before its own."""
    word = bisect.bisect_right(self.char_ends,
                               self.char_ends[first] + index) - 1
    return index + word - first
