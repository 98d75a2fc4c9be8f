"""doc_stride_windows makes the features squad_features makes (which are
the original's), for any lengths, with work linear in the windows."""

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from bert_tf import tokenization
from bert_tf.tasks.squad import examples as squad
from bert_tf.text.squad import features as squad_features
from bert_tf.text.squad.examples import Paragraph, SquadExample
from bert_tf.text.squad.windows import doc_stride_windows
from tests.support.squad_fixtures import DEMO_VOCAB
from tests.support.tensor_sizes import largest_tensor

_TOKENIZER = tokenization.FullTokenizer(DEMO_VOCAB, True)
_WORDS = [token for token in _TOKENIZER.vocab
          if token.isalpha() and len(token) > 1][:300]
_CLS_SEP = _TOKENIZER.convert_tokens_to_ids(["[CLS]", "[SEP]"])


def _ragged(rows):
  return tf.ragged.constant(rows, tf.int64, ragged_rank=1, inner_shape=())


def assert_windows_are_the_original_features(examples, max_seq_length,
                                             doc_stride, max_query_length):
  expected = squad_features.convert_examples_to_features(
      examples, _TOKENIZER, max_seq_length, doc_stride, max_query_length,
      is_training=False)
  windows = doc_stride_windows(
      _ragged([_TOKENIZER.encode(example.question_text)[:max_query_length]
               for example in examples]),
      _ragged([_TOKENIZER.encode(example.paragraph.context)
               for example in examples]),
      max_seq_length, doc_stride, *_CLS_SEP)
  for name in ("input_ids", "input_mask", "segment_ids", "example_index"):
    np.testing.assert_array_equal(windows[name], expected[name], name)
  np.testing.assert_array_equal(windows["is_max_context"],
                                expected["token_is_max_context"] > 0)
  position = np.arange(max_seq_length)[None, :]
  np.testing.assert_array_equal(windows["doc_index"], np.where(
      expected["token_to_orig"] >= 0,
      expected["doc_span_start"][:, None] + position
      - expected["doc_offset"][:, None], -1))


@settings(max_examples=40, deadline=None)
@given(data=st.data(), max_query_length=st.integers(1, 8),
       doc_stride=st.integers(1, 20), extra=st.integers(4, 30))
def test_windows_are_the_original_features(data, max_query_length,
                                           doc_stride, extra):
  word_lists = st.lists(st.sampled_from(_WORDS), max_size=12)
  examples = []
  for number in range(data.draw(st.integers(1, 4))):
    paragraph = Paragraph.from_context(" ".join(
        data.draw(word_lists) + ["end"]))
    examples.append(SquadExample(
        f"q{number}", " ".join(data.draw(word_lists)), paragraph))
  assert_windows_are_the_original_features(
      examples, max_query_length + extra, doc_stride, max_query_length)


@pytest.mark.parametrize("doc_stride", [1, 2, 16, 40])
def test_long_contexts_are_the_original_features(doc_stride):
  """Questions of tens to hundreds of windows each, of different lengths
  (so rooms, and how many neighbours share a piece, differ in one batch),
  beside one-window contexts; a doc_stride of 40 is more
  than any room."""
  rng = np.random.default_rng(doc_stride)
  examples = []
  for number, (num_words, question_words) in enumerate(
      [(400, 1), (150, 6), (3, 2), (0, 4), (250, 3)]):
    paragraph = Paragraph.from_context(" ".join(
        list(rng.choice(_WORDS, num_words)) + ["end"]))
    examples.append(SquadExample(
        f"q{number}", " ".join(rng.choice(_WORDS, question_words)),
        paragraph))
  assert_windows_are_the_original_features(examples, 32, doc_stride, 8)


@pytest.mark.parametrize("doc_stride", [2, 16, 64])
def test_max_context_work_is_linear_in_the_windows(doc_stride):
  """No tensor is larger than windows * max_seq_length * (2 * band + 1),
  band = (room - 1) // step windows either side of one that can share its
  pieces: each window is compared with those, not with every window of
  its question (which a question of many windows makes quadratic)."""
  max_seq_length = 32
  query_lengths = np.array([5, 3])
  doc_lengths = [600, 300]
  rng = np.random.default_rng(0)
  windows, largest = largest_tensor(lambda: doc_stride_windows(
      _ragged([[7] * length for length in query_lengths]),
      _ragged([list(rng.integers(5, 100, length))
               for length in doc_lengths]),
      max_seq_length, doc_stride, *_CLS_SEP))
  rooms = max_seq_length - query_lengths - 3
  band = int(np.max((rooms - 1) // np.minimum(rooms, doc_stride)))
  num_windows = len(windows["input_ids"])
  # Enough windows to a question for all of them to be more than a band.
  assert np.bincount(windows["example_index"]).min() > 2 * (2 * band + 1)
  assert largest <= num_windows * max_seq_length * (2 * band + 1), (
      largest, num_windows, band)
