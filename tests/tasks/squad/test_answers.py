"""Logits -> answers: where the original crashes or writes "empty", the
top positions' ties, the JSON files, and logits that are not numbers."""

import io
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bert_tf import tokenization
from bert_tf.tasks.squad import answers as squad_answers
from bert_tf.text.squad import features as squad_features
from bert_tf.text.squad.examples import Paragraph, SquadExample
from bert_tf.text.squad.answer_options import AnswerOptions
from tests.support.squad_fixtures import DEMO_VOCAB

TOKENIZER = tokenization.FullTokenizer(DEMO_VOCAB, do_lower_case=True)


def examples_and_features():
  paragraph = Paragraph.from_context(
      "The red car stood by the old house, near a green tree.")
  examples = [SquadExample("q1", "what is red ?", paragraph),
              SquadExample("q2", "what is green ?", paragraph)]
  features = squad_features.convert_examples_to_features(
      examples, TOKENIZER, max_seq_length=16, doc_stride=4,
      max_query_length=4, is_training=False)
  return examples, features


def question_only_logits(features):
  """Every feature's top start and end positions inside the question: no
  valid span among them, where the original answers "empty" or crashes."""
  start = np.zeros(features["input_ids"].shape, np.float32)
  end = np.zeros_like(start)
  start[:, 1:3] = 9.0
  end[:, 1:3] = 8.0
  start[:, 0] = end[:, 0] = -1.0  # the null score
  start[:, 6] = 2.0  # the best valid start, where a window has it
  return start, end


@pytest.mark.parametrize("version_2", [True, False])
def test_a_question_without_valid_top_spans_gets_the_best_span(version_2):
  examples, features = examples_and_features()
  start, end = question_only_logits(features)
  answers = squad_answers.predict_answers(
      examples, features, start, end, TOKENIZER, AnswerOptions(
          n_best_size=2, version_2_with_negative=version_2))
  for example in examples:
    nbest = answers.nbest[example.qas_id]
    texts = [entry["text"] for entry in nbest]
    assert [text for text in texts if text] == [
        answers.best_non_null[example.qas_id]]
    assert "empty" not in texts
    assert sum(entry["probability"] for entry in nbest) == pytest.approx(1)
    if version_2:
      assert texts[0] == ""
      odds = answers.null_odds[example.qas_id]
      best = next(entry for entry in nbest if entry["text"])
      assert odds == -2.0 - best["start_logit"] - best["end_logit"]
      assert np.isfinite(odds)
      assert answers.predictions[example.qas_id] == (
          "" if odds > 0 else best["text"])
    else:
      assert answers.predictions[example.qas_id] == texts[0]
  assert list(answers.predictions) == ["q1", "q2"]
  assert list(answers.nbest) == list(answers.predictions)
  assert list(answers.null_odds) == (list(answers.predictions)
                                     if version_2 else [])


def test_the_fallback_span_is_the_best_valid_one():
  examples, features = examples_and_features()
  start, end = question_only_logits(features)
  window = int(np.nonzero(features["token_is_max_context"][0])[0][0])
  start[0, window] = 5.0  # a max-context start in the first window
  end[0, window + 1] = 4.0
  answers = squad_answers.predict_answers(
      examples, features, start, end, TOKENIZER,
      AnswerOptions(n_best_size=2))
  best = answers.nbest["q1"][0]
  assert (best["start_logit"], best["end_logit"]) == (5.0, 4.0)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(st.integers(-3, 3), min_size=12, max_size=12),
                min_size=1, max_size=6), st.integers(1, 14))
def test_best_indexes_are_a_stable_sort(rows, count):
  """Ties in the original's order (its sort is stable, highest first),
  whatever the partition picks."""
  logits = np.array(rows, np.float32)
  expected = [[index for index, _ in sorted(
      enumerate(row), key=lambda pair: pair[1], reverse=True)][:count]
              for row in logits.tolist()]
  assert squad_answers._best_indexes(logits, count).tolist() == expected


def test_json_files_are_the_originals_text():
  examples, features = examples_and_features()
  rng = np.random.RandomState(0)
  start, end = (rng.randn(*features["input_ids"].shape).astype(np.float32)
                for _ in range(2))
  answers = squad_answers.predict_answers(
      examples, features, start, end, TOKENIZER, AnswerOptions(
          version_2_with_negative=True))
  answers.nbest["q\u00e9\"\n"] = [{"text": "caf\u00e9 \u201cx\u201d\t\\",
                                   "probability": 1e-20, "start_logit": -0.0,
                                   "end_logit": 3.0}]
  for part in (answers.predictions, answers.nbest, answers.null_odds, {}):
    written = io.StringIO()
    squad_answers.write_json(part, written)
    assert written.getvalue() == json.dumps(part, indent=4) + "\n"


def test_logits_that_are_not_numbers_are_refused():
  examples, features = examples_and_features()
  start = np.zeros(features["input_ids"].shape, np.float32)
  start[0, 3] = np.nan
  with pytest.raises(ValueError, match="start logits are not all finite"):
    squad_answers.predict_answers(examples, features, start, start.copy() * 0,
                                  TOKENIZER, AnswerOptions())
