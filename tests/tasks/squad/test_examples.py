"""The SQuAD reader: the real files whole, the original's whitespace and
offsets, and bad input stopped with the file and the question."""

import json
import os

import pytest

from bert_tf.tasks.squad import examples as squad, metrics as squad_metrics
from bert_tf.text.squad.examples import Paragraph
from tests.support.helpers import SHARED_DIR

DEV_V1 = os.path.join(SHARED_DIR, "data", "squad", "dev-v1.1.json")
SAMPLE_V2 = os.path.join(SHARED_DIR, "data", "squad", "sample-v2.0.json")


@pytest.mark.shared
def test_dev_v1_is_read_whole_and_its_gold_answers_score_100():
  examples = squad.read_squad_examples(DEV_V1, is_training=False)
  with open(DEV_V1, encoding="utf-8") as reader:
    data = json.load(reader)["data"]
  assert len(data) == 48
  assert len(examples) == 10570
  assert len({id(example.paragraph) for example in examples}) == sum(
      len(article["paragraphs"]) for article in data)
  assert squad.has_gold_answers(examples)
  gold = {example.qas_id: example.gold_answers[0] for example in examples}
  assert squad_metrics.squad_v1_metrics(examples, gold) == {
      "exact_match": 100.0, "f1": 100.0}


@pytest.mark.shared
def test_sample_v2_gold_answers_score_100_with_null_for_impossible():
  examples = squad.read_squad_examples(SAMPLE_V2, False, True)
  assert len(examples) == 14 and squad.has_gold_answers(examples)
  impossible = [e for e in examples if e.gold_is_impossible]
  assert impossible and all(not e.gold_answers for e in impossible)
  gold = {e.qas_id: e.gold_answers[0] if e.gold_answers else ""
          for e in examples}
  results = squad_metrics.squad_v2_metrics(
      examples, gold, {qas_id: -1.0 if text else 1.0
                       for qas_id, text in gold.items()}, gold)
  assert results["exact"] == results["f1"] == 100.0
  assert results["NoAns_total"] == len(impossible)
  assert results["best_f1"] == 100.0


def test_words_split_on_the_originals_whitespace_only():
  paragraph = Paragraph.from_context(
      " a\u00a0b  c\u202fd\te\r\nf\u2009g")
  assert paragraph.doc_tokens == ["a\u00a0b", "c", "d", "e", "f\u2009g"]
  assert paragraph.char_to_word_offset == [
      -1, 0, 0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 3, 4, 4, 4]


def write(tmp_path, data, name="file.json"):
  path = tmp_path / name
  path.write_text(data if isinstance(data, str) else json.dumps(data))
  return str(path)


def squad_file(qas, context="The cat sat on the mat."):
  return {"data": [{"paragraphs": [{"context": context, "qas": qas}]}]}


def test_training_positions_and_skipped_answers(tmp_path, caplog):
  path = write(tmp_path, squad_file([
      {"id": "a", "question": "Who?", "is_impossible": False, "answers": [
          {"text": "cat", "answer_start": 4}]},
      {"id": "b", "question": "Where?", "is_impossible": False, "answers": [
          {"text": "the mat", "answer_start": 15}]},
      {"id": "c", "question": "Odd?", "is_impossible": False, "answers": [
          {"text": "dog", "answer_start": 4}]},
      {"id": "d", "question": "None?", "is_impossible": True,
       "answers": []}]))
  examples = {e.qas_id: e for e in squad.read_squad_examples(
      path, is_training=True, version_2_with_negative=True)}
  assert sorted(examples) == ["a", "b", "d"]  # "dog" is not there
  assert "Could not find answer: 'cat' vs. 'dog'" in caplog.text
  assert (examples["a"].start_position, examples["a"].end_position) == (1, 1)
  assert (examples["b"].start_position, examples["b"].end_position) == (4, 5)
  assert (examples["d"].start_position, examples["d"].orig_answer_text,
          examples["d"].is_impossible) == (-1, "", True)


@pytest.mark.parametrize("content, is_training, expected", [
    ("{\"data\": [", False, r"file.json: not valid JSON: Expecting value: "
     r"line 1 column 11"),
    (b"\xff\xfe\x00{", False, r"file.json: not (valid JSON|UTF-8)"),
    ({"version": "1.1"}, False, r"file.json: top level: no \"data\""),
    (squad_file([{"question": "Who?", "answers": []}]), False,
     r"file.json: article 1, paragraph 1, question 1: no \"id\""),
    (squad_file([{"id": 7, "question": "Who?"}]), False,
     r"question 1: \"id\" is int, not str"),
    (squad_file([{"id": "q1", "answers": []}]), False,
     r"file.json: question q1: no \"question\""),
    (squad_file([{"id": "q1", "question": "Who?", "answers": [
        {"text": "mat", "answer_start": 40}]}]), False,
     r"file.json: question q1, answer 1: answer_start 40 \(text of 3 "
     r"characters\) is outside its context of 23 characters"),
    (squad_file([{"id": "q1", "question": "Who?", "answers": [
        {"text": "cat", "answer_start": 4}]},
                 {"id": "q1", "question": "Again?", "answers": []}]), False,
     r"question q1: its id is given twice"),
    (squad_file([{"id": "q1", "question": "Who?", "answers": [
        {"text": "cat", "answer_start": 4}, {"text": "cat",
                                             "answer_start": 4}]}]), True,
     r"question q1: for training, each question should have exactly 1 "
     r"answer \(it has 2\)"),
    (squad_file([{"id": "q1", "question": "Who?", "answers": []}],
                context=" \t "), False, r"question q1: its context is empty"),
    ({"data": []}, False, r"file.json: no questions"),
])
def test_bad_input_names_the_file_and_question(tmp_path, content,
                                                is_training, expected):
  path = tmp_path / "file.json"
  if isinstance(content, bytes):
    path.write_bytes(content)
  else:
    write(tmp_path, content)
  with pytest.raises(ValueError, match=expected):
    squad.read_squad_examples(str(path), is_training)


def test_v2_training_needs_is_impossible(tmp_path):
  path = write(tmp_path, squad_file([{"id": "q9", "question": "Who?",
                                      "answers": []}]))
  with pytest.raises(ValueError, match=r"question q9: no \"is_impossible\""):
    squad.read_squad_examples(path, True, version_2_with_negative=True)


def test_a_missing_file_names_the_flag(tmp_path):
  with pytest.raises(ValueError, match=r"--predict_file=.*nothing.json does "
                     r"not exist"):
    squad.read_squad_examples(str(tmp_path / "nothing.json"), False)
