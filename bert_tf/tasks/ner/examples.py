"""The CoNLL-2003 files: word, POS, chunk and NER tag per line.

-DOCSTART- lines separate documents, blank lines sentences. The English
distribution's tags are IOB1: an entity starts with I- and B- is used only
where an entity follows another of the same type; files tagged IOB2 (B- at
every entity's start) are read as well. Training uses IOB2 labels (one tag
per role), and predictions are written back in the scheme the file uses.

A bad line (not four columns, a tag outside the task's labels) stops the
read with the file and line number.
"""

import dataclasses

from bert_tf.files import input_checks

# CoNLL-2003's entity types.
ENTITY_TYPES = ("PER", "LOC", "ORG", "MISC")
# The task's labels in label-id order, a row each of the head's (cls/ner/):
# O, then B- and I- of each type (IOB2).
LABELS = ("O",) + tuple(f"{prefix}-{entity}" for entity in ENTITY_TYPES
                        for prefix in ("B", "I"))
DOCUMENT_START = "-DOCSTART-"
IOB1, IOB2 = "IOB1", "IOB2"
_NUM_COLUMNS = 4


@dataclasses.dataclass
class Sentence:
  """One sentence of a CoNLL file.

  Attributes:
    words: the words, as the file has them.
    tags: their NER tags in the file's scheme.
    document: the index of its document in the file (-DOCSTART- counted).
    line: the file's line number (1-based) of its first word.
  """
  words: list
  tags: list
  document: int
  line: int


def read_conll(path, flag="--data_dir"):
  """The sentences of a CoNLL-2003 file, in file order.

  Raises:
    ValueError: the file is missing, a line has another number of columns
      or an unknown tag; naming the file and line.
  """
  input_checks.check_input_file(flag, path)
  sentences, words, tags = [], [], []
  document, first_line = 0, 0

  def end_sentence():
    if words:
      sentences.append(Sentence(list(words), list(tags), document,
                                first_line))
      words.clear()
      tags.clear()

  for number, line in input_checks.utf8_lines(path):
    columns = line.split()
    if not columns:
      end_sentence()
      continue
    if len(columns) != _NUM_COLUMNS:
      raise ValueError(f"{path}:{number}: expected {_NUM_COLUMNS} columns "
                       f"(word, POS, chunk, NER tag), found "
                       f"{len(columns)}: {line.strip()[:80]!r}")
    if columns[0] == DOCUMENT_START:
      end_sentence()
      document += bool(sentences)
      continue
    if columns[3] not in LABELS:
      raise ValueError(f"{path}:{number}: unknown NER tag "
                       f"{columns[3]!r}; expected one of "
                       f"{', '.join(LABELS)}")
    if not words:
      first_line = number
    words.append(columns[0])
    tags.append(columns[3])
  end_sentence()
  return sentences


def count_documents(sentences):
  """How many documents the sentences come from."""
  return len({sentence.document for sentence in sentences})


def detect_scheme(sentences):
  """IOB1 if any entity starts with I- (as the English files' do), else
  IOB2."""
  for sentence in sentences:
    previous = "O"
    for tag in sentence.tags:
      if tag.startswith("I-") and previous[2:] != tag[2:]:
        return IOB1
      previous = tag
  return IOB2


def to_iob2(tags):
  """Tags of either scheme with B- at every entity's first word, as
  conlleval reads them: an entity starts at B-, or at I- after O or
  after another type."""
  return _retag_entity_starts(tags, "I-", "B-")


def from_iob2(tags, scheme):
  """IOB2 tags (possibly ill-formed, as a model predicts them) in
  `scheme`, with the same entities as conlleval reads them."""
  if scheme == IOB2:
    return list(tags)
  return _retag_entity_starts(tags, "B-", "I-")


def _retag_entity_starts(tags, old, new):
  """The tags, those starting `old` changed to `new` where the tag before
  is of another type (or O, or there is none)."""
  converted, previous = [], "O"
  for tag in tags:
    if tag.startswith(old) and previous[2:] != tag[2:]:
      tag = new + tag[2:]
    converted.append(tag)
    previous = tag
  return converted
