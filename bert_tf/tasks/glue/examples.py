"""GLUE and XNLI examples, read from the files their distributions ship.

The original run_classifier.py had processors for CoLA, MNLI, MRPC and XNLI;
the other GLUE tasks follow the same pattern. Each task is described as data
(which file, which columns, whether it has a header, its labels) rather than
as a class per task. Files are read as the original read them:
tab-separated, no quoting (GLUE's quotes are text), a UTF-8 BOM ignored.
"""

import csv
import dataclasses
from typing import Optional

from bert_tf.files import input_checks, storage

# csv's default limit is 128 KB; GLUE-format files of a user's own long texts
# (truncated to max_seq_length later anyway) may hold longer fields.
_LONGEST_FIELD = 2**31 - 1


@dataclasses.dataclass(frozen=True)
class InputExample:
  """One example, as the original's InputExample.

  Attributes:
    guid: "<split>-<line>" (the original's ids).
    text_a: the first text.
    text_b: the second text, or None for single-text tasks.
    label: the label name ("1", "entailment", ...), a float for STS-B, or
      None for test examples.
    index: the test file's index column, used in GLUE submission files.
  """
  guid: str
  text_a: str
  text_b: Optional[str]
  label: object
  index: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class SplitFormat:
  """Where one split's fields are in its file (column numbers, 0-based)."""
  file: str
  text_a: int
  text_b: Optional[int] = None
  label: Optional[int] = None  # None: an unlabelled test file
  index: Optional[int] = None  # the id column of a test file
  header: bool = True
  # XNLI keeps all languages in one file: (column, value) rows to keep.
  language: Optional[int] = None


@dataclasses.dataclass(frozen=True)
class Task:
  """A classification (or regression) task and its files."""
  name: str
  labels: Optional[tuple]  # None: regression (STS-B)
  splits: dict  # split name -> SplitFormat
  # GLUE submission file name per test split, e.g. {"test": "CoLA.tsv"}.
  submission_files: dict = dataclasses.field(default_factory=dict)
  label_aliases: dict = dataclasses.field(default_factory=dict)
  # The GLUE metric eval_results adds to accuracy (tasks/glue/metrics.py):
  # "matthews_corrcoef" (CoLA), "f1" (MRPC, QQP) or None.
  metric: Optional[str] = None

  @property
  def is_regression(self):
    return self.labels is None

  @property
  def has_text_pairs(self):
    """Whether examples have a second text (text_b)."""
    return self.splits["train"].text_b is not None

  @property
  def num_labels(self):
    return 1 if self.is_regression else len(self.labels)

  @property
  def dev_splits(self):
    return [split for split in self.splits if split.startswith("dev")]

  @property
  def test_splits(self):
    return [split for split in self.splits if split.startswith("test")]


def _pair_task(name, labels, submission, a, b, label, test_a, test_b,
               metric=None):
  return Task(name, labels, {
      "train": SplitFormat("train.tsv", a, b, label),
      "dev": SplitFormat("dev.tsv", a, b, label),
      "test": SplitFormat("test.tsv", test_a, test_b, index=0),
  }, {"test": submission}, metric=metric)


_BINARY = ("0", "1")
_ENTAILMENT = ("entailment", "not_entailment")
_NLI = ("contradiction", "entailment", "neutral")

TASKS = {task.name: task for task in [
    Task("cola", _BINARY, {
        "train": SplitFormat("train.tsv", 3, label=1, header=False),
        "dev": SplitFormat("dev.tsv", 3, label=1, header=False),
        "test": SplitFormat("test.tsv", 1, index=0),
    }, {"test": "CoLA.tsv"}, metric="matthews_corrcoef"),
    Task("sst-2", _BINARY, {
        "train": SplitFormat("train.tsv", 0, label=1),
        "dev": SplitFormat("dev.tsv", 0, label=1),
        "test": SplitFormat("test.tsv", 1, index=0),
    }, {"test": "SST-2.tsv"}),
    _pair_task("mrpc", _BINARY, "MRPC.tsv", 3, 4, 0, 3, 4, metric="f1"),
    _pair_task("sts-b", None, "STS-B.tsv", 7, 8, 9, 7, 8),
    _pair_task("qqp", _BINARY, "QQP.tsv", 3, 4, 5, 1, 2, metric="f1"),
    Task("mnli", _NLI, {
        "train": SplitFormat("train.tsv", 8, 9, -1),
        "dev": SplitFormat("dev_matched.tsv", 8, 9, -1),
        "dev_mismatched": SplitFormat("dev_mismatched.tsv", 8, 9, -1),
        "test": SplitFormat("test_matched.tsv", 8, 9, index=0),
        "test_mismatched": SplitFormat("test_mismatched.tsv", 8, 9, index=0),
    }, {"test": "MNLI-m.tsv", "test_mismatched": "MNLI-mm.tsv"}),
    _pair_task("qnli", _ENTAILMENT, "QNLI.tsv", 1, 2, 3, 1, 2),
    _pair_task("rte", _ENTAILMENT, "RTE.tsv", 1, 2, 3, 1, 2),
    _pair_task("wnli", _BINARY, "WNLI.tsv", 1, 2, 3, 1, 2),
]}


def xnli_task(language="zh"):
  """XNLI as the original: MultiNLI's machine-translated training set for
  `language`, and that language's rows of xnli.dev.tsv / xnli.test.tsv."""
  return Task("xnli", _NLI, {
      "train": SplitFormat(f"multinli/multinli.train.{language}.tsv", 0, 1, 2),
      "dev": SplitFormat("xnli.dev.tsv", 6, 7, 1, language=0),
      "test": SplitFormat("xnli.test.tsv", 6, 7, index=None, language=0),
  }, label_aliases={"contradictory": "contradiction"})


def get_task(task_name, xnli_language="zh"):
  """The Task for a --task_name (case-insensitive)."""
  name = task_name.lower()
  if name == "xnli":
    return xnli_task(xnli_language)
  if name not in TASKS:
    raise ValueError(f"--task_name={task_name}: unknown task; expected one "
                     f"of {', '.join(sorted([*TASKS, 'xnli']))}")
  return TASKS[name]


def split_path(task, data_dir, split):
  """The file one split of a task is read from."""
  return f"{data_dir.rstrip('/')}/{task.splits[split].file}"


def read_examples(task, data_dir, split, language="zh"):
  """The examples of one split of a task.

  Args:
    task: a Task.
    data_dir: the task's directory, as the original's --data_dir.
    split: "train", "dev", "test" (or MNLI's "dev_mismatched",
      "test_mismatched").
    language: for XNLI's dev and test files, the language kept.

  Raises:
    ValueError: a missing or empty file, a row with too few columns, an
      unknown label; the message names the file and line.
  """
  split_format = task.splits[split]
  path = split_path(task, data_dir, split)
  if not storage.exists(path):
    raise ValueError(f"{path}: no such file (the {split} set of "
                     f"{task.name})")
  columns = [column for column in (
      split_format.text_a, split_format.text_b, split_format.label,
      split_format.index, split_format.language) if column is not None]
  needed = max(column + 1 if column >= 0 else -column for column in columns)
  examples = []
  for row_number, (line, row) in enumerate(_rows(path)):
    if row_number == 0 and split_format.header:
      continue
    where = f"{path}:{line}"
    if len(row) < needed:
      raise ValueError(f"{where}: expected at least {needed} tab-separated "
                       f"columns, found {len(row)}")
    if split_format.language is not None and \
        row[split_format.language] != language:
      continue
    examples.append(InputExample(
        guid=f"{split}-{row_number}",
        text_a=row[split_format.text_a],
        text_b=None if split_format.text_b is None
        else row[split_format.text_b],
        label=None if split_format.label is None
        else _label(task, row[split_format.label], where),
        index=None if split_format.label is not None
        else (row[split_format.index] if split_format.index is not None
              else str(len(examples)))))
  if not examples:
    raise ValueError(f"{path}: no examples (the {split} set of {task.name} "
                     f"is empty)")
  return examples


def _rows(path):
  """(line number, fields) of a tab-separated file, read as the original:
  no quoting, a UTF-8 byte-order mark ignored, fields of any length.

  Raises:
    ValueError: text that is not UTF-8, naming the file and line.
  """
  csv.field_size_limit(max(csv.field_size_limit(), _LONGEST_FIELD))
  with storage.open_file(path) as reader:
    rows = csv.reader(_without_bom(reader), delimiter="\t", quotechar=None)
    try:
      for row in rows:
        yield rows.line_num, row
    except UnicodeDecodeError as error:
      line = input_checks.first_undecodable_line(path)
      raise ValueError(f"{path}:{line}: not UTF-8 text ({error.reason})"
                       ) from None


def _without_bom(lines):
  """The lines, with a UTF-8 byte-order mark dropped from the first."""
  for number, line in enumerate(lines):
    yield line.lstrip("\ufeff") if number == 0 else line


def _label(task, value, where):
  """A label name checked against the task's labels, or STS-B's float."""
  if task.is_regression:
    try:
      return float(value)
    except ValueError:
      raise ValueError(f"{where}: label {value!r} is not a number") from None
  value = task.label_aliases.get(value, value)
  if value not in task.labels:
    raise ValueError(f"{where}: label {value!r} is not one of "
                     f"{list(task.labels)}")
  return value
