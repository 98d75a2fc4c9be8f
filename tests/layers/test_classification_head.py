import numpy as np

from bert_tf.layers.classification_head import ClassificationHead
from tests.support.keras_harness import run_layer_test


def test_classification_head_uses_transposed_output_weights():
  head = ClassificationHead(num_classes=3)
  x = np.random.default_rng(0).normal(size=(4, 8)).astype(np.float32)
  logits = np.asarray(head(x))
  assert tuple(head.output_weights.shape) == (3, 8)
  np.testing.assert_allclose(
      logits, x @ head.output_weights.numpy().T + head.output_bias.numpy(),
      atol=1e-6)
  run_layer_test(head, x)
