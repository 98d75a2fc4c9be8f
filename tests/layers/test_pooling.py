"""SentencePooling by hand, as sentence-transformers' Pooling computes each
mode: rows with padding, a row of padding alone, and the prompt's tokens
left out (include_prompt false), up to every token of a row."""

import numpy as np
import pytest

from bert_tf.layers.pooling import SentencePooling

MODES = ["cls", "max", "mean", "mean_sqrt_len_tokens", "weightedmean"]
TOKENS = np.random.default_rng(5).normal(size=(3, 6, 4)).astype(np.float32)
# A row of 6 tokens, one of 3, one of padding alone.
MASK = np.array([[1] * 6, [1, 1, 1, 0, 0, 0], [0] * 6], np.int32)


def pooled_by_hand(tokens, mask, left_out):
  """Each mode over the tokens the mask keeps from position left_out on
  (zeros where none is left; max -inf; cls the first kept, else 0)."""
  rows = []
  for row, real in zip(tokens, mask.astype(bool)):
    kept = real & (np.arange(len(real)) >= left_out)
    count = max(kept.sum(), 1e-9)
    weights = np.where(kept, np.arange(1, len(real) + 1), 0)[:, None]
    first = np.argmax(kept) if kept.any() else 0
    rows.append(np.concatenate([
        row[first],
        row[kept].max(0) if kept.any() else np.full(row.shape[1], -np.inf),
        (row * kept[:, None]).sum(0) / count,
        (row * kept[:, None]).sum(0) / np.sqrt(count),
        (row * weights).sum(0) / max(weights.sum(), 1e-9)]))
  return np.array(rows)


@pytest.mark.parametrize("left_out", [None, 2, 3, 7])
def test_every_mode_by_hand(left_out):
  """None: every real token; 2: [CLS] and one prompt token left out; 3:
  all of the short row's; 7: more than the sequence."""
  pooling = SentencePooling(MODES)
  prompt_length = None if left_out is None else np.full(3, left_out,
                                                        np.int32)
  pooled = pooling(TOKENS, MASK, prompt_length=prompt_length)
  np.testing.assert_allclose(pooled, pooled_by_hand(TOKENS, MASK,
                                                    left_out or 0),
                             rtol=0, atol=1e-6)
