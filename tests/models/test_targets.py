"""fit's and evaluate's targets: lists taken as arrays, and targets the
model's head cannot take refused, naming y, before the first step."""

import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from bert_tf.models import targets
from tests.support.helpers import tiny_config

IDS = {"input_ids": np.ones((2, 4), np.int32)}


def test_lists_become_arrays_and_structures_stay():
  assert targets.as_arrays([0, 1], "y").tolist() == [0, 1]
  assert targets.as_arrays((0, 1), "y").tolist() == [0, 1]
  assert targets.as_arrays([[0, 1], [1, 0]], "y").shape == (2, 2)
  pair = targets.as_arrays(([[1, 2]], [0]), "y")
  assert isinstance(pair, tuple) and [part.tolist() for part in pair] == [
      [[1, 2]], [0]]
  arrays = [np.zeros((1, 2)), np.zeros(1)]
  assert targets.as_arrays(arrays, "y")[0] is arrays[0]
  tensor = tf.constant([0, 1])
  assert targets.as_arrays(tensor, "y") is tensor
  assert targets.as_arrays({"logits": [0, 1]}, "y")["logits"].tolist() == [
      0, 1]


@pytest.mark.parametrize("model, x, y, message", [
    (lambda: bert_tf.BertTagger(tiny_config(), 3), IDS, [[0, 1, 2, 3]] * 2,
     r"y holds 3; expected tag ids 0 to 2 \(num_labels=3\)"),
    (lambda: bert_tf.BertTagger(tiny_config(), 3), IDS, [[0] * 5] * 2,
     r"y is shaped \[2, 5\]; expected \[examples, seq_length\] of tag ids"),
    (lambda: bert_tf.BertTagger(tiny_config(), 3), IDS, [[0] * 4, [0] * 3],
     "y holds rows of different lengths"),
    (lambda: bert_tf.BertTagger(tiny_config(), 3), IDS, [[-100] * 4] * 2,
     "y holds -100; expected tag ids 0 to 2"),
    (lambda: bert_tf.BertFeatureTagger(tiny_config(), 3, [-1], "concat",
                                       lstm_units=4), IDS, [[3] * 4] * 2,
     "y holds 3; expected tag ids 0 to 2"),
    (lambda: bert_tf.BertSpanLabeler(tiny_config()), IDS, [[1, 4], [0, 0]],
     r"y holds 4; expected positions 0 to 3 \(seq_length=4\)"),
    (lambda: bert_tf.BertSpanLabeler(tiny_config()), IDS, [1, 2],
     r"y is shaped \[2\]; expected \[examples, 2\] \(start, end\)"),
    (lambda: bert_tf.BertMultipleChoice(tiny_config()),
     {"input_ids": np.ones((2, 4, 8), np.int32)}, [4, 0],
     r"y holds 4; expected choices 0 to 3 \(4 in x\)"),
    (lambda: bert_tf.BertPretrainer(tiny_config()),
     {**IDS, "masked_lm_positions": np.ones((2, 2), np.int32)},
     ([[1, 200]] * 2, [0, 1]),
     r"y\[0\] holds 200; expected vocabulary ids 0 to 98 "
     r"\(vocab_size=99\)"),
    (lambda: bert_tf.BertPretrainer(tiny_config()),
     {**IDS, "masked_lm_positions": np.ones((2, 2), np.int32)},
     ([[1, 2]] * 2, [0, 2]),
     r"y\[1\] holds 2; expected next-sentence labels 0 to 1 \(0 IsNext, 1 "
     r"NotNext\)"),
    (lambda: bert_tf.BertPretrainer(tiny_config()),
     {**IDS, "masked_lm_positions": np.ones((2, 2), np.int32)},
     np.ones((2, 2)), r"y is not a pair; expected \(masked_lm_ids, "
     r"next_sentence_labels\)"),
    (lambda: bert_tf.BertPretrainer(tiny_config()),
     {**IDS, "masked_lm_positions": np.ones((2, 2), np.int32)},
     {"masked_lm_log_probs": np.ones((2, 2))},
     r"y is a dict; run_pretraining's loss \(no loss given to compile\(\)\) "
     r"takes \(masked_lm_ids, next_sentence_labels\)"),
    (lambda: bert_tf.BertClassifier(tiny_config(), 2), IDS,
     tf.ragged.constant([[0], [0, 1]]), "y holds rows of different lengths"),
    (lambda: bert_tf.BertPretrainer(tiny_config()),
     {**IDS, "masked_lm_positions": np.ones((2, 2), np.int32)},
     ([[1, 2, 3]] * 2, [0, 1]), r"y\[0\] is shaped \[2, 3\]; expected "
     r"masked_lm_ids \[examples, predictions\] of vocabulary ids"),
])
def test_each_models_targets_are_checked(model, x, y, message):
  model = model()
  model.compile()
  for method in ("fit", "evaluate"):
    with pytest.raises(ValueError, match=f"^{type(model).__name__}.{method}: "
                                         f"{message}"):
      getattr(model, method)(x, y, verbose=0)


def test_a_dataset_holds_its_own_targets():
  """Nothing to check before training: the dataset gives x and y."""
  model = bert_tf.BertClassifier(tiny_config(), 2)
  model.compile()
  dataset = tf.data.Dataset.from_tensor_slices(
      (IDS, np.array([0, 1]))).batch(2)
  model.fit(dataset, verbose=0)
  assert int(model.optimizer.iterations) == 1


def test_targets_keyed_by_output_name_take_the_default_loss():
  """compile()'s one loss applies to each output y names; a name that is
  no output is refused, and the model still trains after that refusal
  (Keras keeps a function whose first trace failed, and fails on it)."""
  model = bert_tf.BertClassifier(tiny_config(), 2)
  model.compile()
  with pytest.raises(ValueError, match=r"^BertClassifier: y names "
                     r"\['logit'\], not outputs of the model: \['logits', "
                     r"'probabilities'\]$"):
    model.fit(IDS, {"logit": np.array([0, 1])}, verbose=0)
  model.fit(IDS, {"logits": np.array([0, 1])}, verbose=0)
  assert int(model.optimizer.iterations) == 1
