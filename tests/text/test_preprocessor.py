"""BertPreprocessor: raw text to the encoder's inputs, as the original packs
them, in tf.data and in a model, saved with its vocabulary."""

import os
import shutil
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from bert_tf import tokenization
from bert_tf.tasks.glue import examples as glue
from tests.support.helpers import PROJECT_DIR, SHARED_DIR, tiny_config
from tests.support.original_packing import original_features

DEMO_VOCAB = os.path.join(PROJECT_DIR, "vocab", "demo_uncased_vocab.txt")
GLUE_DIR = os.path.join(SHARED_DIR, "data", "glue")
NAMES = ("input_ids", "input_mask", "segment_ids")


@pytest.mark.shared
@pytest.mark.parametrize("task_name, directory, vocab, do_lower_case", [
    ("mrpc", "MRPC", "bert-base-uncased-vocab.txt", True),   # pairs, BOM
    ("sst-2", "SST-2", "bert-base-cased-vocab.txt", False),  # single texts
    ("rte", "RTE", "bert-base-multilingual-cased-vocab.txt", False),
])
def test_packs_real_glue_text_as_the_original(task_name, directory, vocab,
                                              do_lower_case):
  """The original's convert_single_example on 200 dev examples of each,
  at 24 positions, so that most pairs are truncated."""
  vocab_file = os.path.join(SHARED_DIR, "vocab", vocab)
  task = glue.get_task(task_name)
  examples = glue.read_examples(task, os.path.join(GLUE_DIR, directory),
                                "dev")[:200]
  preprocessor = bert_tf.BertPreprocessor(vocab_file, do_lower_case, 24)
  texts = [tf.constant([example.text_a for example in examples])]
  if task.has_text_pairs:
    texts.append(tf.constant([example.text_b for example in examples]))
  ours = preprocessor(texts if len(texts) == 2 else texts[0])
  tokenizer = tokenization.FullTokenizer(vocab_file, do_lower_case)
  for row, example in enumerate(examples):
    expected = original_features(example, 24, tokenizer)
    for name in NAMES:
      assert ours[name][row].numpy().tolist() == expected[name], example.guid


def test_scalars_batches_and_tf_data():
  preprocessor = bert_tf.BertPreprocessor(DEMO_VOCAB, True, 12)
  texts = ["The file will return this object.", "a default string"]
  batch = preprocessor(tf.constant(texts))
  assert all(batch[name].dtype == tf.int32 and batch[name].shape == (2, 12)
             for name in NAMES)
  single = preprocessor(tf.constant(texts[1]))
  assert single["input_ids"].shape == (12,)
  np.testing.assert_array_equal(single["input_ids"], batch["input_ids"][1])
  mapped = tf.data.Dataset.from_tensor_slices(texts).map(preprocessor)
  np.testing.assert_array_equal(
      np.stack([element["input_ids"] for element in mapped]),
      batch["input_ids"])
  batched = tf.data.Dataset.from_tensor_slices(texts).batch(2).map(
      preprocessor)
  np.testing.assert_array_equal(next(iter(batched))["input_ids"],
                                batch["input_ids"])


def test_a_missing_vocabulary_or_special_token_is_a_clear_error(tmp_path):
  with pytest.raises(ValueError, match="has no vocabulary"):
    bert_tf.BertPreprocessor(None)(tf.constant(["text"]))
  vocab = tmp_path / "vocab.txt"
  vocab.write_text("[UNK]\n[CLS]\nthe\n")
  with pytest.raises(ValueError, match=r"vocab.txt: has no \[SEP\] token"):
    bert_tf.BertPreprocessor(str(vocab))


def raw_text_classifier(vocab_file, max_seq_length=16):
  config = tiny_config(vocab_size=len(open(DEMO_VOCAB).readlines()))
  return bert_tf.BertClassifier(
      config, num_labels=2,
      preprocessor=bert_tf.BertPreprocessor(vocab_file, True, max_seq_length))


SENTENCES = ["this will return the object", "a string from the file",
             "that object with this", "default file string will"]


def test_a_raw_text_classifier_fits_predicts_and_saves_its_vocabulary(
    tmp_path):
  """fit and predict on Python strings; the .keras file holds the
  vocabulary, so a fresh process loads it after the vocab file is gone,
  with `import bert_tf` only, and gives the same probabilities."""
  vocab_file = str(tmp_path / "vocab.txt")
  shutil.copy(DEMO_VOCAB, vocab_file)
  # Seeded, and a learning rate the tiny model learns these 16 examples
  # with in 12 steps (Adam's default moved the loss by a thousandth, either
  # way by the draw of the weights and dropout masks).
  keras.utils.set_random_seed(0)
  model = raw_text_classifier(vocab_file)
  model.compile(optimizer=keras.optimizers.Adam(1e-2),
                loss=keras.losses.SparseCategoricalCrossentropy(
                    from_logits=True),
                metrics=["sparse_categorical_accuracy"])
  history = model.fit(SENTENCES * 4, np.array([1, 0, 1, 0] * 4),
                      batch_size=4, epochs=3, verbose=0)
  assert history.history["loss"][-1] < history.history["loss"][0]
  expected = model.predict(SENTENCES, verbose=0)["probabilities"]
  model.save(tmp_path / "model.keras")
  os.remove(vocab_file)
  np.save(tmp_path / "expected.npy", expected)
  script = (
      "import sys, numpy as np, bert_tf, keras\n"
      f"model = keras.saving.load_model({str(tmp_path / 'model.keras')!r})\n"
      f"got = model.predict({SENTENCES!r}, verbose=0)\n"
      f"np.testing.assert_array_equal(got['probabilities'], "
      f"np.load({str(tmp_path / 'expected.npy')!r}))\n"
      "print(type(model).__name__, type(model.preprocessor).__name__)\n")
  result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path,
                          capture_output=True, text=True, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  assert result.stdout.split() == ["BertClassifier", "BertPreprocessor"]


def test_its_export_needs_tensorflow_text_only(tmp_path):
  """A raw-text model exported by Keras (model.export) serves from a process
  that imports TensorFlow and TensorFlow Text, not bert_tf."""
  model = raw_text_classifier(DEMO_VOCAB)
  expected = model(tf.constant(SENTENCES))["probabilities"].numpy()
  model.export(str(tmp_path / "export"), verbose=False,
               input_signature=[tf.TensorSpec([None], tf.string)])
  script = (
      "import sys, numpy as np, tensorflow as tf, tensorflow_text\n"
      f"served = tf.saved_model.load({str(tmp_path / 'export')!r})\n"
      f"got = served.serve(tf.constant({SENTENCES!r}))\n"
      "assert 'bert_tf' not in sys.modules\n"
      "np.save(sys.argv[1], got['probabilities'].numpy())\n")
  result = subprocess.run(
      [sys.executable, "-c", script, str(tmp_path / "got.npy")],
      cwd=tmp_path, capture_output=True, text=True, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  np.testing.assert_allclose(np.load(tmp_path / "got.npy"), expected,
                             atol=1e-6)


def test_a_pair_classifier_takes_a_tuple_of_two_lists():
  """fit, predict and a direct call on (text_a, text_b) lists: the pairs
  packed as the preprocessor packs them."""
  model = raw_text_classifier(DEMO_VOCAB)
  model.compile(optimizer="adam",
                loss=keras.losses.SparseCategoricalCrossentropy(
                    from_logits=True))
  pairs = (SENTENCES, SENTENCES[::-1])
  model.fit(pairs, np.array([1, 0, 1, 0]), batch_size=2, epochs=1, verbose=0)
  predicted = model.predict(pairs, verbose=0)["probabilities"]
  np.testing.assert_allclose(model(pairs)["probabilities"], predicted,
                             atol=1e-6)
  packed = model.preprocessor(pairs)
  assert set(packed["segment_ids"].numpy()[0]) == {0, 1}
  np.testing.assert_allclose(
      model.predict(packed, verbose=0)["probabilities"], predicted, atol=1e-6)
