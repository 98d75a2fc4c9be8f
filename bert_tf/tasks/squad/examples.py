"""SQuAD v1.1 and v2.0 examples, read from the official JSON files.

As the original run_squad's read_squad_examples: a paragraph's context is
split into words on its whitespace rule (space, tab, CR, LF and U+202F, not
the other Unicode spaces), each character is mapped to the word it is in,
and a training answer's character span becomes a word span; a training
answer that cannot be found in those words (odd Unicode) is skipped with a
warning, as the original skips it. Beyond the original, the file is checked
as it is read: bad JSON, a question without an id or text, an id given
twice, an answer outside its context stop the run with the file and the
question's id. The gold answers are kept so that a dev set can be scored.
"""

import json
import logging
import random

from bert_tf.files import input_checks, storage
from bert_tf.text.squad.examples import (Paragraph, SquadExample,
                                        answer_words)

logger = logging.getLogger(__name__)

# The original pre-shuffles training examples with this seed, so that the
# input pipeline needs no large shuffle buffer.
TRAIN_SHUFFLE_SEED = 12345


def read_squad_examples(input_file, is_training, version_2_with_negative=False,
                        flag_name="--predict_file"):
  """The file's questions, in file order (shuffled for training, as the
  original shuffles them with random.Random(12345)).

  Args:
    input_file: a SQuAD JSON file (train-v1.1.json, dev-v2.0.json, ...).
    is_training: whether answers are needed (exactly one per answerable
      question) and become word positions.
    version_2_with_negative: whether questions may be unanswerable
      (is_impossible), as the original's flag.
    flag_name: the flag naming the file, for errors.

  Raises:
    ValueError: the file is missing, not JSON or not SQuAD, naming the file
      and the question.
  """
  input_checks.check_input_file(flag_name, input_file)
  with storage.open_file(input_file, "rb") as reader:
    try:
      data = json.load(reader)
    except json.JSONDecodeError as error:
      raise ValueError(f"{input_file}: not valid JSON: {error}") from None
    except RecursionError:
      raise ValueError(f"{input_file}: JSON nested too deeply to read (no "
                       f"SQuAD file nests more than a few levels)") from None
    except UnicodeDecodeError as error:
      raise ValueError(f"{input_file}: not UTF-8 text: {error}") from None
  reader = _FileReader(input_file, is_training, version_2_with_negative)
  examples = reader.examples(data)
  if not examples and reader.answers_not_found:
    raise ValueError(
        f"{input_file}: no answer of its {reader.answers_not_found} "
        f"questions is found in its context (the text at answer_start is "
        f"not the answer's text), so each is skipped, as the original "
        f"skips it: nothing to train on")
  if not examples:
    raise ValueError(f"{input_file}: no questions")
  if is_training:
    random.Random(TRAIN_SHUFFLE_SEED).shuffle(examples)
  return examples


def has_gold_answers(examples):
  """Whether every question carries an answer or is marked unanswerable, so
  that predictions can be scored (a dev set, not a test set)."""
  return all(example.gold_answers or example.gold_is_impossible
             for example in examples)


class _FileReader:
  """Walks the JSON of one file, naming where it is in errors."""

  def __init__(self, path, is_training, version_2_with_negative):
    self.path = path
    self.is_training = is_training
    self.version_2_with_negative = version_2_with_negative
    self.seen_ids = set()
    self.answers_not_found = 0  # training questions skipped

  def fail(self, where, message):
    raise ValueError(f"{self.path}: {where}: {message}")

  def field(self, mapping, name, kind, where):
    if not isinstance(mapping, dict) or name not in mapping:
      self.fail(where, f"no \"{name}\"")
    value = mapping[name]
    if not isinstance(value, kind) or isinstance(value, bool) != (
        kind is bool):
      self.fail(where, f"\"{name}\" is {type(value).__name__}, not "
                f"{kind.__name__}")
    return value

  def examples(self, data):
    examples = []
    for article_number, article in enumerate(
        self.field(data, "data", list, "top level"), 1):
      for paragraph_number, paragraph in enumerate(self.field(
          article, "paragraphs", list, f"article {article_number}"), 1):
        where = f"article {article_number}, paragraph {paragraph_number}"
        context = self.field(paragraph, "context", str, where)
        shared = Paragraph.from_context(context)
        for question_number, qa in enumerate(
            self.field(paragraph, "qas", list, where), 1):
          example = self.example(
              qa, shared, f"{where}, question {question_number}")
          if example is not None:
            examples.append(example)
    return examples

  def example(self, qa, paragraph, where):
    qas_id = self.field(qa, "id", str, where)
    where = f"question {qas_id}"
    if qas_id in self.seen_ids:
      self.fail(where, "its id is given twice")
    self.seen_ids.add(qas_id)
    question_text = self.field(qa, "question", str, where)
    if not paragraph.doc_tokens:
      self.fail(where, "its context is empty")
    raw_answers = self.field(qa, "answers", list, where) \
        if "answers" in qa or self.is_training else []
    answers = [self.answer(answer, paragraph, f"{where}, answer {number}")
               for number, answer in enumerate(raw_answers, 1)]
    # v2.0 training needs it, as the original; elsewhere it is optional.
    needs_is_impossible = self.is_training and self.version_2_with_negative
    gold_is_impossible = (needs_is_impossible or "is_impossible" in qa) and \
        self.field(qa, "is_impossible", bool, where)
    example = SquadExample(
        qas_id=qas_id, question_text=question_text, paragraph=paragraph,
        is_impossible=needs_is_impossible and gold_is_impossible,
        gold_answers=tuple(text for text, _ in answers),
        gold_is_impossible=gold_is_impossible)
    if self.is_training:
      return self.with_training_answer(example, answers, where)
    return example

  def answer(self, answer, paragraph, where):
    """(text, answer_start), checked to lie inside the context."""
    text = self.field(answer, "text", str, where)
    start = self.field(answer, "answer_start", int, where)
    if not 0 <= start or start + max(len(text), 1) > len(paragraph.context):
      self.fail(where, f"answer_start {start} (text of {len(text)} "
                f"characters) is outside its context of "
                f"{len(paragraph.context)} characters")
    return text, start

  def with_training_answer(self, example, answers, where):
    """The example with the original's training answer, or None (skipped,
    with a warning) when its text is not found in the context's words."""
    if example.is_impossible:
      example.orig_answer_text = ""
      example.start_position = example.end_position = -1
      return example
    if len(answers) != 1:
      self.fail(where, f"for training, each question should have exactly "
                f"1 answer (it has {len(answers)})")
    text, start = answers[0]
    words = answer_words(example.paragraph, text, start)
    if words is None:
      self.answers_not_found += 1
      return None
    example.orig_answer_text = text
    example.start_position, example.end_position = words
    return example
