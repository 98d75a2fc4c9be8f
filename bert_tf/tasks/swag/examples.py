"""The SWAG files as the swagaf distribution ships them ("regular" layout).

train.csv, val.csv and test.csv, comma-separated with quoting (fields may
hold commas, quotes and newlines), under the header

    ,video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,ending1,
    ending2,ending3,label

whose first, unnamed column is the row's index. test.csv has no labels: its
label column may be missing or empty. A bad row (another number of fields,
a label outside 0-3) stops the read with the file and line.
"""

import csv
import dataclasses
import io
from typing import Optional

from bert_tf.files import input_checks, storage

NUM_CHOICES = 4
ENDINGS = tuple(f"ending{index}" for index in range(NUM_CHOICES))
_COLUMNS = ("", "video-id", "fold-ind", "startphrase", "sent1", "sent2",
            "gold-source") + ENDINGS
_LABEL = "label"


@dataclasses.dataclass
class SwagExample:
  """One row: the context (sent1), the start of the ending (sent2) and the
  four candidate endings; label is the right one's index (None if unknown).

  Attributes:
    index: the row's index (the unnamed first column).
    line: the file's line number where the row starts.
  """
  index: str
  context: str
  start_ending: str
  endings: tuple
  label: Optional[int]
  line: int


def read_swag(path, labelled, flag="--data_dir"):
  """The rows of a swagaf CSV file, in file order.

  Args:
    path: train.csv, val.csv or test.csv.
    labelled: whether every row must have a label (train and val).

  Raises:
    ValueError: the file is missing, empty, not UTF-8 or not in the
      swagaf layout, or a row is bad; naming the file and line.
  """
  input_checks.check_input_file(flag, path)
  examples = []
  with storage.open_file(path, "rb") as binary:
    reader = csv.reader(io.TextIOWrapper(binary, encoding="utf-8-sig",
                                         newline=""))
    try:
      header = next(reader, None)
      columns = _check_header(path, header)
      line = reader.line_num + 1
      for row in reader:
        if row:
          examples.append(_example(path, line, columns, row, labelled))
        line = reader.line_num + 1
    except UnicodeDecodeError as error:
      line = input_checks.first_undecodable_line(path)
      raise ValueError(f"{path}:{line}: not UTF-8 text ({error.reason})"
                       ) from None
    except csv.Error as error:
      raise ValueError(f"{path}:{reader.line_num}: {error}") from None
  if not examples:
    raise ValueError(f"{path}: no rows")
  return examples


def _check_header(path, header):
  """The header's columns; raises ValueError unless it is swagaf's."""
  expected = ",".join(_COLUMNS + (_LABEL,))
  if header is None:
    raise ValueError(f"{path}: empty file; expected the swagaf header "
                     f"{expected}")
  if tuple(header[:len(_COLUMNS)]) != _COLUMNS or \
      header[len(_COLUMNS):] not in ([], [_LABEL]):
    raise ValueError(f"{path}:1: not the swagaf header {expected} (the "
                     f"'regular' layout): {','.join(header)[:200]}")
  return header


def _example(path, line, columns, row, labelled):
  if len(row) != len(columns):
    raise ValueError(f"{path}:{line}: {len(row)} fields, expected "
                     f"{len(columns)} ({','.join(columns)})")
  fields = dict(zip(columns, row))
  label = fields.get(_LABEL, "")
  if label == "" and not labelled:
    label = None
  elif label not in {str(index) for index in range(NUM_CHOICES)}:
    raise ValueError(f"{path}:{line}: label {label!r}: expected 0 to "
                     f"{NUM_CHOICES - 1}")
  else:
    label = int(label)
  return SwagExample(fields[""], fields["sent1"], fields["sent2"],
                     tuple(fields[name] for name in ENDINGS), label, line)
