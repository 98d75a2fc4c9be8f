import shutil

import pytest

import bert_tf
from tests.support.helpers import ORIGINAL_TINY, SHARED_DIR


def released_dir(tmp_path, vocab_size=99):
  """A directory laid out as Google released models (no `checkpoint` file)."""
  for suffix in (".index", ".data-00000-of-00001"):
    shutil.copy(f"{ORIGINAL_TINY}/bert_model.ckpt{suffix}", tmp_path)
  shutil.copy(f"{ORIGINAL_TINY}/bert_config.json", tmp_path)
  (tmp_path / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n" + "".join(
      f"token{index}\n" for index in range(vocab_size - 4)))
  return str(tmp_path)


@pytest.mark.shared
def test_opens_a_released_model_directory(tmp_path):
  pretrained = bert_tf.load_pretrained(released_dir(tmp_path))
  assert isinstance(pretrained.model, bert_tf.BertPretrainer)
  assert pretrained.config.vocab_size == 99
  assert pretrained.vocab_file == str(tmp_path / "vocab.txt")
  assert len(pretrained.load_report.loaded) == 46


@pytest.mark.shared
def test_builds_the_requested_model_class(tmp_path):
  pretrained = bert_tf.load_pretrained(released_dir(tmp_path),
                                       model_class=bert_tf.BertEncoder)
  assert isinstance(pretrained.model, bert_tf.BertEncoder)
  assert len(pretrained.load_report.unused) == 7


@pytest.mark.shared
def test_vocabulary_larger_than_the_table_is_refused(tmp_path):
  with pytest.raises(ValueError, match="vocab.txt: 120 tokens, but vocab_size"):
    bert_tf.load_pretrained(released_dir(tmp_path, vocab_size=120))


@pytest.mark.shared
def test_missing_vocabulary_is_named(tmp_path):
  directory = released_dir(tmp_path)
  (tmp_path / "vocab.txt").unlink()
  with pytest.raises(FileNotFoundError, match="vocab.txt: missing"):
    bert_tf.load_pretrained(directory)


@pytest.mark.shared
def test_a_hugging_face_folder_fine_tunes_on_raw_text_in_keras():
  """The README's Keras example: open a checkpoint, build a raw-text
  classifier on its encoder and vocabulary, fit on Python strings."""
  import keras
  import numpy as np
  folder = f"{SHARED_DIR}/reference/huggingface/bert_for_sequence_classification"
  pretrained = bert_tf.load_pretrained(folder, bert_tf.BertEncoder)
  classifier = bert_tf.BertClassifier(
      pretrained.config, num_labels=2,
      preprocessor=pretrained.preprocessor(max_seq_length=24))
  classifier.encoder.set_weights(pretrained.model.get_weights())
  texts = ["A quiet, lovely film.", "Dull and far too long.",
           "Sehr schön!", "東京は雨でした。"]
  inputs = classifier.preprocessor(texts)
  np.testing.assert_array_equal(
      classifier.encoder(inputs)["pooled_output"],
      pretrained.model(inputs)["pooled_output"])
  classifier.compile(optimizer="adam",
                     loss=keras.losses.SparseCategoricalCrossentropy(
                         from_logits=True),
                     metrics=["sparse_categorical_accuracy"])
  history = classifier.fit(texts, np.array([1, 0, 1, 0]), epochs=2,
                           verbose=0)
  assert len(history.history["loss"]) == 2
  assert classifier.predict(texts, verbose=0)["probabilities"].shape == (4, 2)


def test_a_preprocessor_longer_than_the_model_is_refused_when_made(tmp_path):
  vocab = tmp_path / "vocab.txt"
  vocab.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nword\n")
  config = bert_tf.BertConfig(vocab_size=5, max_position_embeddings=64)
  pretrained = bert_tf.PretrainedModel(
      config=config, model=None, vocab_file=str(vocab), load_report=None,
      do_lower_case=True, labels=None)
  assert pretrained.preprocessor(max_seq_length=64).max_seq_length == 64
  with pytest.raises(ValueError, match=r"^max_seq_length=65 is over the "
                     r"model's max_position_embeddings, 64$"):
    pretrained.preprocessor(max_seq_length=65)
  # The default (128) is capped at what the model takes.
  assert pretrained.preprocessor().max_seq_length == 64
