"""Masked-LM on raw text: BertPretrainer.from_pretrained(dir).fit(texts)
masks as create_pretraining_data does, anew each epoch; fill_mask gives
transformers' fill-mask pipeline's tokens and scores."""

import collections
import json
import random

import keras
import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from bert_tf.pretraining import instances
from bert_tf.text import masking
from bert_tf.wordpiece.masking_vocabulary import MaskingVocabulary
from tests.support.helpers import PROJECT_DIR, SHARED_DIR, tiny_config

PRETRAINING = f"{SHARED_DIR}/reference/huggingface/bert_for_pretraining"
# transformers' pipeline("fill-mask") on that folder
# (tests/fixtures/huggingface/make_fill_mask.py).
REFERENCE = f"{PROJECT_DIR}/tests/fixtures/huggingface/" \
    "fill_mask_reference.json"
# transformers' outputs on texts holding special tokens
# (tests/fixtures/huggingface/make_transformers_tokenization.py).
TOKENIZATION_REFERENCE = f"{PROJECT_DIR}/tests/fixtures/huggingface/" \
    "transformers_tokenization.json"
DEMO_VOCAB = f"{PROJECT_DIR}/vocab/demo_uncased_vocab.txt"
TEXTS = ["the quick brown fox jumps over the lazy dog",
         "where does the lake end", "it was released by google",
         "bert reads text in both directions at once"] * 4

VOCAB = {token: index for index, token in enumerate(
    ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "##c", "##d",
     "e"])}
# [CLS] a ##c ##d b e a b ##c [SEP] [PAD] [PAD]: words {1,2,3} {4} {5} {6}
# {7,8}.
SEQUENCE = [2, 5, 7, 8, 6, 9, 5, 6, 7, 3, 0, 0]
DRAWS = 4000


def ours(whole_words):
  """Each position's share of DRAWS masks, and how often each number of
  predictions was made, from masking.mask_tokens."""
  ids = tf.constant([SEQUENCE] * DRAWS, tf.int32)
  options = masking.MaskingOptions(4, 0.3, whole_words)
  _, positions, _, weights = masking.mask_tokens(
      ids, tf.cast(ids > 0, tf.int32), MaskingVocabulary(VOCAB),
      options, tf.constant([7, 11]))
  chosen = [row[:int(count)] for row, count in zip(
      positions.numpy(), weights.numpy().sum(axis=1))]
  return shares_and_counts(chosen)


def theirs(whole_words):
  """The same from create_pretraining_data's choices
  (pretraining.instances, the original's draws)."""
  rng = random.Random(0)
  vocabulary = MaskingVocabulary(VOCAB)
  tokens = SEQUENCE[:10]
  chosen = []
  for _ in range(DRAWS):
    if whole_words:
      chosen.append(instances._choose_whole_words(  # pylint: disable=protected-access
          tokens, 3, vocabulary, rng))
    else:  # the original's: the candidates shuffled, the first taken
      candidates = list(range(1, 9))
      instances.shuffle(candidates, rng)
      chosen.append(candidates[:3])
  return shares_and_counts(chosen)


def shares_and_counts(chosen):
  shares = np.zeros(len(SEQUENCE))
  for positions in chosen:
    shares[list(positions)] += 1 / len(chosen)
  return shares, collections.Counter(len(positions) for positions in chosen)


@pytest.mark.parametrize("whole_words", [False, True])
def test_masks_are_chosen_as_create_pretraining_data_chooses(whole_words):
  """round(10 tokens * 0.3) = 3 predictions; each position (never [CLS],
  [SEP] or padding) as often as the original's draws choose it, whole
  words together."""
  our_shares, our_counts = ours(whole_words)
  their_shares, their_counts = theirs(whole_words)
  np.testing.assert_allclose(our_shares, their_shares, atol=0.04)
  assert our_shares[[0, 9, 10, 11]].tolist() == [0, 0, 0, 0]
  assert set(our_counts) == set(their_counts) == {3}


def test_eighty_ten_ten():
  ids = tf.constant([SEQUENCE] * DRAWS, tf.int32)
  masked, positions, masked_ids, weights = masking.mask_tokens(
      ids, tf.cast(ids > 0, tf.int32), MaskingVocabulary(VOCAB),
      masking.MaskingOptions(4, 0.3), tf.constant([1, 2]))
  chosen = tf.gather(masked, positions, batch_dims=1).numpy()[
      weights.numpy() > 0]
  original = masked_ids.numpy()[weights.numpy() > 0]
  assert abs(np.mean(chosen == VOCAB["[MASK]"]) - 0.8) < 0.02
  # Kept: a tenth, and a random draw of the same id now and then.
  assert abs(np.mean(chosen == original) - (0.1 + 0.1 / len(VOCAB))) < 0.02


def assert_as_pipeline(guesses, masks):
  """fill_mask's guesses for one text are the pipeline's: [[token_str,
  score], ...] for each mask."""
  if len(masks) == 1:
    guesses = [guesses]
  assert len(guesses) == len(masks)
  for mask, expected in zip(guesses, masks):
    assert [token for token, _ in mask] == [token for token, _ in expected]
    np.testing.assert_allclose([score for _, score in mask],
                               [score for _, score in expected],
                               rtol=0, atol=1e-6)


@pytest.mark.shared
def test_fill_mask_gives_the_pipelines_tokens_and_scores():
  pretrainer = bert_tf.BertPretrainer.from_pretrained(PRETRAINING)
  with open(REFERENCE, encoding="utf-8") as reader:
    reference = json.load(reader)["results"]
  for case in reference:
    assert_as_pipeline(bert_tf.fill_mask(pretrainer, case["text"], top_k=5),
                       case["masks"])
  with pytest.raises(ValueError, match=r"no \[MASK\] in the first 64 tokens"):
    bert_tf.fill_mask(pretrainer, "no mask here")


@pytest.mark.shared
def test_fill_mask_keeps_special_tokens_whole_as_the_pipeline():
  """A Hugging Face folder's pretrainer tokenises by transformers' rules:
  [SEP], [CLS] and [PAD] in the text stay whole, a 101-character word is
  [UNK]. A list of texts gives a list of results, as the pipeline."""
  pretrainer = bert_tf.BertPretrainer.from_pretrained(PRETRAINING)
  with open(TOKENIZATION_REFERENCE, encoding="utf-8") as reader:
    reference = json.load(reader)
  texts = reference["fill_mask_texts"]
  for text, masks in zip(texts, reference["fill_mask"]):
    assert_as_pipeline(bert_tf.fill_mask(pretrainer, text), masks)
  for guesses, masks in zip(bert_tf.fill_mask(pretrainer, texts),
                            reference["fill_mask"]):
    assert_as_pipeline(guesses, masks)
  with pytest.raises(ValueError, match=r"no \[MASK\] in the first 64 tokens "
                     r"of '\[mask\]'"):
    bert_tf.fill_mask(pretrainer, ["the [MASK]", "[mask]"])


@pytest.fixture(scope="module")
def demo_pretrainer():
  """A tiny BertPretrainer of the demo vocabulary (1974 tokens)."""
  preprocessor = bert_tf.BertMaskedLMPreprocessor(DEMO_VOCAB, True, 16)
  return bert_tf.BertPretrainer(tiny_config(vocab_size=1974),
                                preprocessor=preprocessor)


@pytest.mark.parametrize("arguments, error, message", [
    ({"top_k": -1}, ValueError, r"top_k=-1; expected an integer from 1 to "
     r"the vocabulary's size, 1974"),
    ({"top_k": 0}, ValueError, "top_k=0; expected"),
    ({"top_k": 100000}, ValueError, "top_k=100000; expected"),
    ({"top_k": 2.5}, ValueError, "top_k=2.5; expected"),
    ({"top_k": "5"}, ValueError, "top_k='5'; expected"),
    ({"top_k": True}, ValueError, "top_k=True; expected"),
    ({"text": b"the [MASK]"}, ValueError, r"text is bytes; expected a str "
     r"with a \[MASK\], or a list of them"),
    ({"text": None}, ValueError, "text is None; expected a str"),
    ({"text": ("the [MASK]",)}, ValueError, "text is tuple; expected"),
    ({"text": ["the [MASK]", None]}, ValueError, r"text\[1\] is None"),
    ({"text": "the [MASK] \ud800"}, ValueError, "text holds a lone "
     "surrogate"),
    ({"text": "a " * 10**5 + "[MASK]"}, ValueError, r"no \[MASK\] in the "
     r"first 16 tokens of '(a ){30}\.\.\.'$"),
])
def test_fill_mask_arguments_are_checked(demo_pretrainer, arguments, error,
                                         message):
  arguments = {"text": "the [MASK] sat", **arguments}
  with pytest.raises(error, match=f"^fill_mask: {message}"):
    bert_tf.fill_mask(demo_pretrainer, **arguments)


def test_fill_mask_takes_top_k_none_and_lists_as_the_pipeline(
    demo_pretrainer):
  """top_k=None is the pipeline's 5; a list gives one result per text (an
  empty list none); the vocabulary's size is the most guesses."""
  one = bert_tf.fill_mask(demo_pretrainer, "the [MASK] sat", top_k=None)
  assert len(one) == 5
  assert bert_tf.fill_mask(demo_pretrainer, ["the [MASK] sat"]) == [one]
  two = bert_tf.fill_mask(demo_pretrainer, ["[MASK] a [MASK]", "the [MASK]"])
  assert [len(guesses) for guesses in two] == [2, 5]
  assert bert_tf.fill_mask(demo_pretrainer, []) == []
  many = bert_tf.fill_mask(demo_pretrainer, ["the [MASK] sat"] * 70)
  assert len(many) == 70  # in batches of 32
  np.testing.assert_allclose([[score for _, score in guesses]
                              for guesses in many],
                             [[score for _, score in one]] * 70, atol=1e-6)
  every = bert_tf.fill_mask(demo_pretrainer, "the [MASK]", top_k=1974)
  assert len({token for token, _ in every}) == 1974


def test_fill_mask_refuses_a_model_without_a_masked_lm_head():
  classifier = bert_tf.BertClassifier(
      tiny_config(vocab_size=1974), 2,
      preprocessor=bert_tf.BertPreprocessor(DEMO_VOCAB, True, 16))
  with pytest.raises(TypeError, match=r"^fill_mask: pretrainer is a "
                     r"BertClassifier; expected a BertPretrainer"):
    bert_tf.fill_mask(classifier, "the [MASK]")


@pytest.mark.shared
def test_fit_on_text_draws_new_masks_each_epoch(tmp_path):
  keras.utils.set_random_seed(0)
  pretrainer = bert_tf.BertPretrainer.from_pretrained(PRETRAINING,
                                                      max_seq_length=16)
  assert isinstance(pretrainer.preprocessor, bert_tf.BertMaskedLMPreprocessor)
  training = pretrainer._new_masks(TEXTS, 4, shuffle=False)  # pylint: disable=protected-access
  held = pretrainer._fixed_masks(tf.constant(TEXTS), 4)  # pylint: disable=protected-access
  positions = lambda batches: [batch[0]["masked_lm_positions"].numpy()
                               for batch in batches]
  assert not all(np.array_equal(*pair) for pair in zip(positions(training),
                                                       positions(training)))
  assert all(np.array_equal(*pair) for pair in zip(positions(held),
                                                   positions(held)))
  # The compiled loss is run_pretraining's masked-LM loss (no next
  # sentence: single texts have none).
  features, (ids, _), (weights, next_weights) = next(iter(held))
  pretrainer.compile()
  assert not next_weights.numpy().any()
  loss = pretrainer.evaluate(held.take(1), verbose=0)
  expected = bert_tf.masked_lm_loss(
      pretrainer(features)["masked_lm_log_probs"], ids, weights)
  np.testing.assert_allclose(loss, expected, rtol=1e-5)
  next_sentence = pretrainer.next_sentence_head.get_weights()
  history = pretrainer.fit(TEXTS, batch_size=4, epochs=2, verbose=0,
                           validation_data=TEXTS[:4])
  assert len(history.history["val_loss"]) == 2
  # No gradient reaches the next-sentence head; weight decay alone moves it.
  for now, then in zip(pretrainer.next_sentence_head.get_weights(),
                       next_sentence):
    np.testing.assert_allclose(now, then, rtol=1e-5)
  pretrainer.save(tmp_path / "model.keras")
  loaded = keras.saving.load_model(tmp_path / "model.keras")
  assert loaded.preprocessor.options == pretrainer.preprocessor.options
  with pytest.raises(ValueError, match=r"predict takes ids .*fill_mask"):
    loaded.predict(TEXTS)


@pytest.mark.parametrize("arguments, message", [
    ({"max_predictions_per_seq": 0}, r"max_predictions_per_seq=0: expected "
     r"an integer from 1 to max_seq_length \(16\)"),
    ({"max_predictions_per_seq": 10**9}, "max_predictions_per_seq=1000000000"),
    ({"max_predictions_per_seq": 2.5}, r"max_predictions_per_seq=2.5: "
     r"expected an integer"),
    ({"max_predictions_per_seq": "2"}, r"max_predictions_per_seq='2': "
     r"expected an integer"),
    ({"masked_lm_prob": 0}, r"masked_lm_prob=0: expected a number in "
     r"\(0, 1\]"),
    ({"masked_lm_prob": "0.15"}, r"masked_lm_prob='0.15': expected a number"),
    ({"masked_lm_prob": float("nan")}, r"masked_lm_prob=nan: expected"),
    ({"max_seq_length": "32"}, r"max_seq_length='32': expected an integer "
     r"of at least 3"),
])
def test_masking_options_are_checked_before_use(arguments, message):
  """A .keras config's numbers too: they size the masked batches."""
  with pytest.raises(ValueError, match=message):
    bert_tf.BertMaskedLMPreprocessor(
        DEMO_VOCAB, True, **{"max_seq_length": 16, **arguments})
