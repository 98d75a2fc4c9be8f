"""SQuAD's examples, as the original run_squad's read_squad_examples makes
them from a question, its context and (for training) its answer: the
context split into words on the original's whitespace rule (space, tab,
CR, LF and U+202F, not the other Unicode spaces), each character mapped to
the word it is in, and a training answer's character span made a word
span, or refused (None) where those words do not contain its text."""

import dataclasses
import functools
import logging
import re
from typing import Optional

import numpy as np

logger = logging.getLogger(__name__)

# A word: a run of characters other than the original's separators (space,
# tab, CR, LF, U+202F; not str.isspace: U+00A0 stays inside a word).
_WORD = re.compile("[^ \t\r\n\u202f]+")


@dataclasses.dataclass(eq=False)
class Paragraph:
  """A context and its words; shared by the questions asked of it.

  Attributes:
    context: the text.
    doc_tokens: its whitespace-separated words (the original's name).
  """
  context: str
  doc_tokens: list

  @classmethod
  def from_context(cls, context):
    return cls(context, _WORD.findall(context))

  @functools.cached_property
  def char_to_word_offset(self):
    """For each character, the index of its word (of the word before it,
    for whitespace; -1 before the first word), as the original's."""
    word_starts = [match.start() for match in _WORD.finditer(self.context)]
    return (np.searchsorted(word_starts, np.arange(len(self.context)),
                            side="right") - 1).tolist()


@dataclasses.dataclass(eq=False)
class SquadExample:
  """One question, as the original's SquadExample.

  Attributes:
    qas_id: the question's id.
    question_text: the question.
    paragraph: the Paragraph it is asked of (its doc_tokens are the
      original's example.doc_tokens).
    orig_answer_text: for training, the answer ("" if impossible).
    start_position, end_position: for training, the answer's first and last
      word (-1 if impossible).
    is_impossible: for training on v2.0, the question has no answer.
    gold_answers: every answer text the file gives (for scoring).
    gold_is_impossible: the file marks the question unanswerable.
  """
  qas_id: str
  question_text: str
  paragraph: Paragraph
  orig_answer_text: Optional[str] = None
  start_position: Optional[int] = None
  end_position: Optional[int] = None
  is_impossible: bool = False
  gold_answers: tuple = ()
  gold_is_impossible: bool = False

  @property
  def doc_tokens(self):
    return self.paragraph.doc_tokens


def answer_words(paragraph, text, start):
  """The first and last word of a training answer `text` at character
  `start` of the paragraph's context, or None where those words do not
  contain it (odd Unicode), as the original skips it."""
  offsets = paragraph.char_to_word_offset
  first, last = offsets[start], offsets[start + len(text) - 1]
  actual_text = " ".join(paragraph.doc_tokens[first:last + 1])
  cleaned_answer_text = " ".join(text.split())
  if actual_text.find(cleaned_answer_text) == -1:
    logger.warning("Could not find answer: '%s' vs. '%s'", actual_text,
                   cleaned_answer_text)
    return None
  return first, last
