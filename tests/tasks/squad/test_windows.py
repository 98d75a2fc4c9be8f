"""doc_stride_windows makes the features squad_features makes (which are
the original's), for any lengths."""

import numpy as np
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from bert_tf import tokenization
from bert_tf.tasks.squad import examples as squad, features as squad_features
from bert_tf.tasks.squad.windows import doc_stride_windows
from tests.support.squad_fixtures import DEMO_VOCAB

_TOKENIZER = tokenization.FullTokenizer(DEMO_VOCAB, True)
_WORDS = [token for token in _TOKENIZER.vocab
          if token.isalpha() and len(token) > 1][:300]


@settings(max_examples=40, deadline=None)
@given(data=st.data(), max_query_length=st.integers(1, 8),
       doc_stride=st.integers(1, 20), extra=st.integers(4, 30))
def test_windows_are_the_original_features(data, max_query_length,
                                           doc_stride, extra):
  max_seq_length = max_query_length + extra
  word_lists = st.lists(st.sampled_from(_WORDS), max_size=12)
  examples = []
  for number in range(data.draw(st.integers(1, 4))):
    paragraph = squad.Paragraph.from_context(" ".join(
        data.draw(word_lists) + ["end"]))
    examples.append(squad.SquadExample(
        f"q{number}", " ".join(data.draw(word_lists)), paragraph))
  expected = squad_features.convert_examples_to_features(
      examples, _TOKENIZER, max_seq_length, doc_stride, max_query_length,
      is_training=False)
  ragged = lambda rows: tf.ragged.constant(rows, tf.int64, ragged_rank=1,
                                           inner_shape=())
  windows = doc_stride_windows(
      ragged([_TOKENIZER.encode(example.question_text)[:max_query_length]
              for example in examples]),
      ragged([_TOKENIZER.encode(example.paragraph.context)
              for example in examples]),
      max_seq_length, doc_stride, *_TOKENIZER.convert_tokens_to_ids(
          ["[CLS]", "[SEP]"]))
  for name in ("input_ids", "input_mask", "segment_ids", "example_index"):
    np.testing.assert_array_equal(windows[name], expected[name], name)
  np.testing.assert_array_equal(windows["is_max_context"],
                                expected["token_is_max_context"] > 0)
  position = np.arange(max_seq_length)[None, :]
  np.testing.assert_array_equal(windows["doc_index"], np.where(
      expected["token_to_orig"] >= 0,
      expected["doc_span_start"][:, None] + position
      - expected["doc_offset"][:, None], -1))
