"""SQuAD features and predictions equal the original run_squad's.

tests/fixtures/squad/original_outputs.json holds what the original's
read_squad_examples, convert_examples_to_features and write_predictions
made (run under tensorflow.compat.v1 by make_reference.py) for slices of
dev-v1.1.json, sample-v2.0.json and an adversarial file (tabs, CR/LF,
U+202F and U+00A0, control and zero-width characters, accents, CJK, emoji,
answers inside words, on whitespace, not in the text, long contexts), with
three vocabularies, cased and uncased, several window sizes, and logits
that look trained.
"""

import functools
import json
import os

import pytest

from bert_tf import tokenization
from bert_tf.tasks.squad import answers as squad_answers, examples as squad
from bert_tf.text.squad import features as squad_features
from bert_tf.text.squad.answer_options import AnswerOptions
from tests.support import squad_reference as reference
from tests.support.helpers import SHARED_DIR

pytestmark = pytest.mark.shared
CASES = {case[0]: case for case in reference.CASES}


@functools.lru_cache(maxsize=None)
def original():
  with open(reference.REFERENCE_FILE, encoding="utf-8") as reader:
    return json.load(reader)


@functools.lru_cache(maxsize=None)
def tokenizer_of(vocab, do_lower_case):
  return tokenization.FullTokenizer(
      os.path.join(SHARED_DIR, "vocab", vocab), do_lower_case)


def run_case(name, is_training):
  """(examples, features, tokenizer) of a case, made by bert_tf."""
  (_, file, (first, last), vocab, lower, version_2, seq, stride, query,
   *_) = CASES[name]
  path = (os.path.join(SHARED_DIR, "data", "squad", file) if file
          else reference.ADVERSARIAL_FILE)
  examples = squad.read_squad_examples(path, is_training, version_2)
  if not is_training:
    examples = examples[first:last]
  tokenizer = tokenizer_of(vocab, lower)
  features = squad_features.convert_examples_to_features(
      examples, tokenizer, seq, stride, query, is_training)
  return examples, features, tokenizer


def assert_forms_equal(ours, theirs, what):
  assert len(ours) == len(theirs), what
  different = [index for index, (a, b) in enumerate(zip(ours, theirs))
               if a != b]
  assert not different, f"{what}: {len(different)} differ, first {different[0]}"


@pytest.mark.parametrize("name", list(CASES))
def test_prediction_features_are_the_originals(name):
  examples, features, tokenizer = run_case(name, is_training=False)
  assert [example.qas_id for example in examples] == \
      original()[name]["predict_ids"]
  assert_forms_equal(
      [reference.digest(form) for form in reference.features_forms(
          features, tokenizer, is_training=False)],
      original()[name]["predict_features"], f"{name} features")


@pytest.mark.parametrize("name", ["adversarial_uncased", "adversarial_cased"])
def test_training_examples_and_features_are_the_originals(name):
  """Shuffled as the original, unfindable answers skipped, answer spans
  improved, windows without the answer at 0/0, impossible questions."""
  examples, features, tokenizer = run_case(name, is_training=True)
  assert [example.qas_id for example in examples] == \
      original()[name]["train_ids"]
  assert "adv4-4" not in original()[name]["train_ids"]  # "yesterday"
  assert_forms_equal(
      [reference.digest(form) for form in reference.features_forms(
          features, tokenizer, is_training=True)],
      original()[name]["train_features"], f"{name} training features")


@pytest.mark.parametrize("name", list(CASES))
def test_predictions_are_the_originals(name):
  (*_, version_2, _, _, _, n_best, max_answer) = CASES[name]
  examples, features, tokenizer = run_case(name, is_training=False)
  start, end = reference.peaked_logits(
      features["input_mask"], features["segment_ids"],
      seed=len(features["input_mask"]))
  answers = squad_answers.predict_answers(
      examples, features, start, end, tokenizer, AnswerOptions(
          n_best_size=n_best, max_answer_length=max_answer,
          version_2_with_negative=version_2))
  forms = [reference.answer_form(answers.predictions[example.qas_id],
                                 answers.nbest[example.qas_id],
                                 answers.null_odds.get(example.qas_id))
           for example in examples]
  theirs = original()[name]["answers"]
  if CASES[name][1] is None:  # the adversarial file's are kept whole
    assert forms == theirs
  else:
    assert_forms_equal([reference.digest(form) for form in forms], theirs,
                       f"{name} answers")
