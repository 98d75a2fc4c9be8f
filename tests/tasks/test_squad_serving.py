"""serve_text's span choice equals run_squad's (squad_answers, the
original's write_predictions) for any logits: with few top positions and
short answers, so that its fallback to any valid span is taken too."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf import tokenization
from bert_tf.data import squad, squad_answers, squad_features
from bert_tf.models import BertSpanLabeler
from bert_tf.tasks.squad_serving import _best_spans, squad_serving
from bert_tf.text import InGraphTokenizer
from bert_tf.text.offsets import tokenize_with_offsets
from bert_tf.text.windows import doc_stride_windows
from tests.helpers import tiny_config
from tests.squad_fixtures import DEMO_VOCAB, synthetic_squad


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
  options = squad_answers.AnswerOptions(
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
  spans = _best_spans(*logits, windows, options, len(examples))
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
  -1, with finite numbers (JSON has no infinities), beside real ones."""
  model = BertSpanLabeler(tiny_config(vocab_size=len(open(
      DEMO_VOCAB, encoding="utf-8").readlines())))
  for version_2 in (False, True):
    _, signatures = squad_serving(
        model, InGraphTokenizer(DEMO_VOCAB, True), 32, 8, 8,
        squad_answers.AnswerOptions(version_2_with_negative=version_2))
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
      # answer is the context's own characters at its offset.
      text = answer["answer"].numpy()[2].decode()
      start = answer["answer_start"].numpy()[2]
      assert text and "a red car"[start:start + len(text)] == text
