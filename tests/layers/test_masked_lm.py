import numpy as np

from bert_tf.layers.masked_lm import MaskedLMHead
from tests.support.keras_harness import run_layer_test


def test_masked_lm_head_gathers_positions_and_ties_the_table():
  head = MaskedLMHead(vocab_size=11, hidden_size=8, hidden_act="linear")
  rng = np.random.default_rng(1)
  sequence = rng.normal(size=(2, 5, 8)).astype(np.float32)
  table = rng.normal(size=(11, 8)).astype(np.float32)
  positions = np.array([[4, 0], [2, 2]], np.int32)
  logits = np.asarray(head(sequence, positions, table))
  assert logits.shape == (2, 2, 11)

  gathered = np.stack([sequence[0, [4, 0]], sequence[1, [2, 2]]])
  hidden = gathered @ head.transform_dense.kernel.numpy()
  hidden += head.transform_dense.bias.numpy()
  hidden = (hidden - hidden.mean(-1, keepdims=True)) / np.sqrt(
      hidden.var(-1, keepdims=True) + 1e-12)
  expected = hidden @ table.T + head.output_bias.numpy()
  np.testing.assert_allclose(logits, expected, atol=1e-5)
  run_layer_test(head, sequence, positions, table)
