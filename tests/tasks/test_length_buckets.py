"""Prediction by length: every task's outputs are its full-length ones.

Each batch runs at its own length (Predictor, batching.bucket_length); for
every task the outputs at every real position, and what decode makes of
them, must be those of batches run at max_seq_length. SQuAD's n-best
ranking reads padding positions too, so its runner predicts at full length
unless told to bucket.
"""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf import tokenization
from bert_tf.data.batching import bucket_length, feature_lengths
from bert_tf.tasks.glue import examples as glue
from bert_tf.tasks.glue.task import GlueTask
from bert_tf.tasks.ner.task import NerTask
from bert_tf.text.squad.answer_options import AnswerOptions
from bert_tf.tasks.squad.task import SquadTask
from bert_tf.tasks.swag.task import SwagTask
from bert_tf.tasks.task import SplitData
from bert_tf.models.predictor import Predictor
from tests.support.conll_fixtures import synthetic_conll
from tests.support.helpers import SHARED_DIR, tiny_config
from tests.support.squad_fixtures import DEMO_VOCAB, synthetic_squad
from tests.support.swag_fixtures import synthetic_swag

UNCASED_VOCAB = os.path.join(SHARED_DIR, "vocab", "bert-base-uncased-vocab.txt")


def predicted_both_ways(task, split, vocab_file, max_seq_length,
                        do_lower_case=True):
  """(decoded by length, decoded at full length, outputs by length) of a
  tiny random model on the split, after checking the outputs agree at
  every real position."""
  examples = task.read_examples(split)
  tokenizer = tokenization.FullTokenizer(vocab_file, do_lower_case)
  features = task.convert_examples(split, examples, tokenizer, max_seq_length)
  lengths = feature_lengths(features)
  assert len({bucket_length(length, max_seq_length)
              for length in lengths}) > 1, "too few lengths to test"
  keras.utils.set_random_seed(0)
  strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
  with strategy.scope():
    model = task.build_model(tiny_config(
        vocab_size=len(tokenizer.vocab),
        max_position_embeddings=max(64, max_seq_length)))
  predictor = Predictor(strategy, model)
  by_length = predictor.predict(features, batch_size=8)
  full = predictor.predict(features, batch_size=8, by_length=False)
  real = np.arange(max_seq_length) < lengths[:, None]
  for ours, theirs in zip(tf.nest.flatten(by_length), tf.nest.flatten(full)):
    assert ours.shape == theirs.shape
    computed = ~np.isneginf(ours)
    if not computed.all():  # only past each feature's real positions
      assert ours.shape[1] == max_seq_length and computed[real].all()
    np.testing.assert_allclose(ours[computed], theirs[computed], atol=1e-5)
  data = SplitData(examples, features)
  return (task.decode(split, data, by_length, tokenizer),
          task.decode(split, data, full, tokenizer), by_length)


@pytest.mark.shared
@pytest.mark.parametrize("name", ["MRPC", "STS-B", "CoLA"])
def test_glue_dev_predictions_are_the_full_length_ones(name):
  task = GlueTask(glue.get_task(name),
                  os.path.join(SHARED_DIR, "data", "glue", name))
  ours, theirs, _ = predicted_both_ways(task, "dev", UNCASED_VOCAB, 128)
  if name == "STS-B":
    np.testing.assert_allclose(ours["predictions"], theirs["predictions"],
                               atol=1e-5)
  else:
    np.testing.assert_array_equal(ours["probabilities"].argmax(-1),
                                  theirs["probabilities"].argmax(-1))


def test_ner_tags_are_the_full_length_ones(tmp_path):
  for name, seed in (("eng.testa", 1),):
    synthetic_conll(tmp_path / name, seed, 12)
  ours, theirs, outputs = predicted_both_ways(
      NerTask(str(tmp_path), document_context=True), "dev", DEMO_VOCAB, 64)
  assert outputs["probabilities"].shape[1:] == (64, 9)
  assert ours.tags == theirs.tags
  assert ours.loss == pytest.approx(theirs.loss, abs=1e-5)


def test_swag_choices_are_the_full_length_ones(tmp_path):
  synthetic_swag(tmp_path / "val.csv", 1, 60)
  ours, theirs, _ = predicted_both_ways(SwagTask(str(tmp_path)), "dev",
                                        DEMO_VOCAB, 32)
  np.testing.assert_array_equal(ours["probabilities"].argmax(-1),
                                theirs["probabilities"].argmax(-1))


def test_squad_logits_agree_but_its_n_best_lists_rank_padding(tmp_path):
  """The logits of every real position are the full-length ones; the
  n-best lists are not (the original ranks padding positions too, which a
  shorter run does not compute), so SQuAD predicts at full length."""
  synthetic_squad(tmp_path / "dev.json", seed=1, num_paragraphs=40)
  task = SquadTask(None, str(tmp_path / "dev.json"), doc_stride=16,
                   max_query_length=12,
                   answer_options=AnswerOptions(version_2_with_negative=True))
  ours, theirs, _ = predicted_both_ways(task, "predict", DEMO_VOCAB, 64)
  assert task.predicts_at_full_length
  assert ours.nbest != theirs.nbest
  assert not any(task.predicts_at_full_length for task in (
      GlueTask(glue.get_task("MRPC"), ""), NerTask(""), SwagTask("")))
