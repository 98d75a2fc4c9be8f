"""serve_text's span choice equals run_squad's (squad_answers, the
original's write_predictions) for any logits: with few top positions and
short answers, so that its fallback to any valid span is taken too. Its
work grows linearly with the context, and a context over the export's
limit is refused."""

import json
import re

import numpy as np
import pytest
import tensorflow as tf

from bert_tf import tokenization
from bert_tf.models import BertSpanLabeler
from bert_tf.tasks.squad import answers as squad_answers, examples as squad
from bert_tf.tasks.squad.serving import squad_serving
from bert_tf.tasks.squad.task import SquadTask
from bert_tf.text.tokenizer import InGraphTokenizer
from bert_tf.text.squad import features as squad_features
from bert_tf.text.squad.answering import has_piece, piece_offset
from bert_tf.text.squad.final_text import final_text
from bert_tf.text.squad.answer_options import AnswerOptions
from bert_tf.text.squad.spans import best_spans
from bert_tf.text.squad.windows import doc_stride_windows
from bert_tf.text.offsets import tokenize_with_offsets
from tests.support.helpers import tiny_config
from tests.support.squad_fixtures import DEMO_VOCAB, synthetic_squad
from tests.support.tensor_sizes import largest_tensor


@pytest.mark.parametrize("seed", range(4))
def test_spans_are_chosen_as_run_squad_chooses_them(tmp_path, seed):
  synthetic_squad(tmp_path / "dev.json", seed=seed, num_paragraphs=12,
                  questions_per_paragraph=1)
  examples = squad.read_squad_examples(str(tmp_path / "dev.json"), False)
  tokenizer = tokenization.FullTokenizer(DEMO_VOCAB, True)
  features = squad_features.convert_examples_to_features(
      examples, tokenizer, max_seq_length=32, doc_stride=8,
      max_query_length=8, is_training=False)
  rng = np.random.default_rng(seed)
  logits = rng.normal(size=(2,) + features["input_ids"].shape).astype(
      np.float32)
  options = AnswerOptions(
      n_best_size=2, max_answer_length=3, version_2_with_negative=True)
  expected = squad_answers.predict_answers(examples, features, *logits,
                                           tokenizer, options)
  contexts = [example.paragraph.context for example in examples]
  pieces = tokenize_with_offsets(InGraphTokenizer(DEMO_VOCAB, True),
                                 tf.constant(contexts))
  windows = doc_stride_windows(
      tf.ragged.constant([tokenizer.encode(example.question_text)[:8]
                          for example in examples], tf.int64),
      pieces.ids.merge_dims(1, 2), 32, 8,
      *tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"]))
  spans = best_spans(*logits, windows, options, len(examples))
  starts = pieces.starts.merge_dims(1, 2).to_list()
  ends = pieces.ends.merge_dims(1, 2).to_list()
  for row, example in enumerate(examples):
    start, end = int(spans["start"][row]), int(spans["end"][row])
    assert contexts[row][starts[row][start]:ends[row][end]] == \
        expected.best_non_null[example.qas_id], example.qas_id
    assert float(spans["null_score"][row] - spans["score"][row]) == \
        pytest.approx(expected.null_odds[example.qas_id], abs=1e-9)


def test_a_context_without_pieces_has_no_answer():
  """An empty or blank context (run_squad refuses one) is answered "" at
  -1, with finite numbers (JSON has no infinities), beside real ones and
  alone."""
  model = BertSpanLabeler(tiny_config(vocab_size=len(open(
      DEMO_VOCAB, encoding="utf-8").readlines())))
  for version_2 in (False, True):
    _, signatures = squad_serving(
        model, InGraphTokenizer(DEMO_VOCAB, True), 32, 8, 8,
        AnswerOptions(version_2_with_negative=version_2))
    answer = signatures["serve_text"](
        question=tf.constant(["what ?", "what ?", "what ?"]),
        context=tf.constant(["", " \u200b ", "a red car"]))
    assert answer["answer"].numpy().tolist()[:2] == [b"", b""]
    assert answer["answer_start"].numpy().tolist()[:2] == [-1, -1]
    assert np.isfinite(answer["score"].numpy()).all()
    if version_2:
      assert answer["has_answer"].numpy().tolist()[:2] == [False, False]
      assert np.isfinite(answer["null_odds"].numpy()).all()
    else:
      # The untrained model's span may start inside a word ("ar" of "car",
      # as the original's get_final_text answers a span from "##ar"): the
      # answer is the context's characters at its offsets.
      text = answer["answer"].numpy()[2].decode()
      start = answer["answer_start"].numpy()[2]
      assert text and "a red car"[start:start + len(text)] == text
    # Alone in its batch: the most common request.
    for context in ("", " ", "\x01", "\u200b"):
      alone = signatures["serve_text"](question=tf.constant(["what ?"]),
                                       context=tf.constant([context]))
      assert (alone["answer"].numpy().tolist(),
              alone["answer_start"].numpy().tolist()) == ([b""], [-1])


def test_a_context_over_the_limit_is_refused():
  """SquadTask's max_serving_context_length counts characters (code
  points, not bytes) of each context: one at the limit is answered, a
  longer one fails the request naming its row, its length and the
  limit."""
  model = BertSpanLabeler(tiny_config(vocab_size=len(open(
      DEMO_VOCAB, encoding="utf-8").readlines())))
  _, signatures = SquadTask(
      None, None, doc_stride=8, max_query_length=8,
      max_serving_context_length=12).serving(
          model, InGraphTokenizer(DEMO_VOCAB, True), 32)
  at_limit = "a red car \u00e9\u00e9"
  assert len(at_limit) == 12 and len(at_limit.encode()) == 14
  answer = signatures["serve_text"](
      question=tf.constant(["what ?"] * 2),
      context=tf.constant(["a car", at_limit]))
  assert answer["answer_start"].numpy().min() >= 0
  with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(
      "context: row 1 has 13 characters; this export answers at most 12 "
      "(run_squad --max_serving_context_length)")):
    signatures["serve_text"](question=tf.constant(["what ?"] * 2),
                             context=tf.constant(["a car", at_limit + "s"]))


def test_the_work_around_the_model_grows_linearly_with_the_context():
  """Four times the context makes at most about four times the largest
  tensor of the steps around the model (the pieces and their offsets, the
  windows and their max-context flags, the span choice, the answer's
  text): for sentences, and for a text holding one long word, where a
  dense [windows, positions, windows] or [words, longest word] would grow
  with the square of the context."""
  tokenizer = InGraphTokenizer(DEMO_VOCAB, True)
  options = AnswerOptions()

  def answer(length):
    contexts = tf.constant([
        "a " * (length // 4) + "b" * (length // 2),
        ("The harbour was quiet; a red car stood by the door. " * length)[
            :length]])
    pieces = tokenize_with_offsets(tokenizer, contexts)
    windows = doc_stride_windows(
        tokenizer(tf.constant(["what colour car?"] * 2)),
        pieces.ids.merge_dims(1, 2), 48, 16, tokenizer.vocab["[CLS]"],
        tokenizer.vocab["[SEP]"])
    logits = tf.random.stateless_normal(
        [2, len(windows["input_ids"]), 48], seed=[0, length])
    spans = best_spans(logits[0], logits[1], windows, options, 2)
    return final_text(
        contexts, piece_offset(pieces.starts, spans["start"]),
        piece_offset(pieces.ends, spans["end"]),
        has_piece(pieces.ids, spans, tokenizer.vocab["[UNK]"]),
        pieces.words.text_char_sizes)

  _, small = largest_tensor(lambda: answer(2000))
  _, large = largest_tensor(lambda: answer(8000))
  assert large <= 4.5 * small, (small, large)


# Characters inside words that make the original's get_final_text fall
# back to whole words, or not: thin and no-break spaces (separators to
# BasicTokenizer, not to run_squad), a zero-width space and a soft hyphen
# (deleted), a combining accent (stripped), a precomposed one, a Hangul
# syllable (split by NFD), a snowman ([UNK] in the demo vocabulary).
_INSIDE_WORDS = ("\u2009", "\u00a0", "\u200b", "\u00ad", "e\u0301", "\u00e9",
                 "\ud55c", "\u2603", "A", "'s", "-")
# What run_squad splits words on, beside a space.
_BETWEEN_WORDS = (" ", " ", " ", "\n", "  ", "\t", "\u202f")


def _odd_contexts(rng, count):
  """Contexts of the demo vocabulary's words, some run together (pieces
  starting inside a word), with _INSIDE_WORDS inside and _BETWEEN_WORDS
  between them."""
  with open(DEMO_VOCAB, encoding="utf-8") as reader:
    words = [line.strip() for line in reader
             if line.strip().isalpha() and len(line.strip()) > 2][:300]
  contexts = []
  for _ in range(count):
    parts = []
    for _ in range(rng.integers(8, 20)):
      word = "".join(rng.choice(words, rng.integers(1, 3)))
      if rng.random() < 0.4:
        cut = rng.integers(1, len(word))
        word = word[:cut] + rng.choice(_INSIDE_WORDS) + word[cut:]
      parts += [word, rng.choice(_BETWEEN_WORDS)]
    contexts.append("".join(parts[:-1]))
  return contexts


@pytest.mark.parametrize("do_lower_case", [True, False])
def test_answers_are_the_text_predictions_json_gives(tmp_path,
                                                     do_lower_case):
  """final_text answers what run_squad's get_final_text does for the same
  spans: the pieces' characters, or where the original cannot align them
  with their words, the whole words joined by single spaces (such as
  "linux-image-...amd64.deb." beside a thin space)."""
  rng = np.random.default_rng(7 + do_lower_case)
  contexts = _odd_contexts(rng, 24)
  (tmp_path / "dev.json").write_text(json.dumps({"data": [{"paragraphs": [
      {"context": context, "qas": [{"id": f"q{number}", "question": "what ?",
                                    "answers": [], "is_impossible": True}]}
      for number, context in enumerate(contexts)]}]}), encoding="utf-8")
  examples = squad.read_squad_examples(str(tmp_path / "dev.json"), False)
  tokenizer = tokenization.FullTokenizer(DEMO_VOCAB, do_lower_case)
  features = squad_features.convert_examples_to_features(
      examples, tokenizer, max_seq_length=48, doc_stride=16,
      max_query_length=8, is_training=False)
  options = AnswerOptions(n_best_size=3, max_answer_length=6)
  in_graph = InGraphTokenizer(DEMO_VOCAB, do_lower_case)
  pieces = tokenize_with_offsets(in_graph, tf.constant(contexts))
  windows = doc_stride_windows(
      tf.ragged.constant([tokenizer.encode("what ?")] * len(examples),
                         tf.int64),
      pieces.ids.merge_dims(1, 2), 48, 16,
      *tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"]))
  fell_back = 0
  for _ in range(6):
    logits = rng.normal(size=(2,) + features["input_ids"].shape).astype(
        np.float32)
    expected = squad_answers.predict_answers(examples, features, *logits,
                                             tokenizer, options)
    spans = best_spans(*logits, windows, options, len(examples))
    answers = final_text(
        tf.constant(contexts),
        piece_offset(pieces.starts, spans["start"]),
        piece_offset(pieces.ends, spans["end"]),
        has_piece(pieces.ids, spans, tokenizer.vocab["[UNK]"]),
        pieces.words.text_char_sizes)
    for row, example in enumerate(examples):
      text = answers.text[row].numpy().decode()
      start, end = int(answers.start[row]), int(answers.end[row])
      assert text == expected.best_non_null[example.qas_id], (
          contexts[row], start, end)
      assert text == " ".join(re.split(r"[ \t\r\n\u202f]+",
                                       contexts[row][start:end]))
      fell_back += text != contexts[row][
          int(piece_offset(pieces.starts, spans["start"])[row]):
          int(piece_offset(pieces.ends, spans["end"])[row])]
  assert fell_back > 10

