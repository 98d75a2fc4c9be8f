"""BertPreprocessor: raw text to the encoder's inputs, as the original packs
them, in tf.data and in a model, saved with its vocabulary."""

import contextlib
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import threading

import keras
import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from bert_tf import tokenization
from bert_tf.tasks.glue import examples as glue
from bert_tf.text.tokenizer import InGraphTokenizer
from tests.support.helpers import PROJECT_DIR, SHARED_DIR, tiny_config
from tests.support.keras_harness import rewrite_keras_file
from tests.support.sentence_transformers_folders import (
    assert_as_sentence_transformers)
from tests.support.original_packing import original_features

DEMO_VOCAB = os.path.join(PROJECT_DIR, "vocab", "demo_uncased_vocab.txt")
FIXTURES_DIR = os.path.join(PROJECT_DIR, "tests", "fixtures")
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


def test_a_pair_of_different_batch_sizes_is_one_clear_error():
  """Eagerly, and in a graph where the sizes are known only when it runs."""
  preprocessor = bert_tf.BertPreprocessor(DEMO_VOCAB, True, 12)
  with pytest.raises(ValueError,
                     match="the two texts of a pair must have the same "
                           "batch size, got 2 and 1"):
    preprocessor((["this will", "return"], ["the object"]))
  spec = tf.TensorSpec([None], tf.string)
  packed = tf.function(lambda a, b: preprocessor((a, b)),
                       input_signature=[spec, spec])
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match="the two texts of a pair must have the same "
                           "batch size"):
    packed(tf.constant(["this will", "return"]), tf.constant(["the object"]))


def test_fit_evaluate_and_predict_take_str_and_bytes_mixed():
  """As a direct call takes them, and fit's validation_data too; a pair of
  such lists in predict (test_a_pair_classifier_takes_a_tuple_of_two_lists
  fits on pairs)."""
  model = raw_text_classifier(DEMO_VOCAB)
  model.compile(optimizer="adam",
                loss=keras.losses.SparseCategoricalCrossentropy(
                    from_logits=True))
  texts = ["this will return the object", b"a string from the file",
           "that object with this".encode(), "default file string will"]
  labels = np.array([1, 0, 1, 0])
  history = model.fit(texts, labels, batch_size=2, epochs=1, verbose=0,
                      validation_data=(texts, labels))
  assert set(history.history) == {"loss", "val_loss"}
  model.evaluate(texts, labels, verbose=0)
  np.testing.assert_allclose(
      model.predict(texts, verbose=0)["probabilities"],
      model(tf.constant([tf.compat.as_bytes(text) for text in texts]))[
          "probabilities"], atol=1e-6)
  pairs = (texts, texts[::-1])
  np.testing.assert_allclose(model.predict(pairs, verbose=0)["probabilities"],
                             model(pairs)["probabilities"], atol=1e-6)


@pytest.mark.parametrize("inputs", [[], ([], []), np.array([], object)],
                         ids=["list", "pair", "array"])
def test_no_texts_is_a_clear_error(inputs):
  model = raw_text_classifier(DEMO_VOCAB)
  model.compile(optimizer="adam", loss="mse")
  for run in (model.predict, lambda x: model.fit(x, np.array([]))):
    with pytest.raises(ValueError, match="x holds no examples"):
      run(inputs)


def saved_raw_text_classifier(tmp_path):
  """The path of a raw-text classifier of the demo vocabulary, called once
  (as fit or predict would) and saved as a .keras file."""
  path = str(tmp_path / "model.keras")
  model = raw_text_classifier(DEMO_VOCAB)
  model(SENTENCES)
  model.save(path)
  return path


def test_a_raw_text_model_loads_without_warnings(tmp_path, recwarn):
  """Keras' warnings (UserWarning) are about the model; others (NumPy's
  deprecations inside Keras) are not."""
  path = saved_raw_text_classifier(tmp_path)
  recwarn.clear()
  keras.saving.load_model(path)
  assert [str(warning.message) for warning in recwarn
          if issubclass(warning.category, UserWarning)] == []


@contextlib.contextmanager
def fifo_of(path, data):
  """A FIFO at `path` that gives `data` to each reader, so that a test
  reading it by mistake goes on instead of hanging; yields the list of the
  times it was opened (a path each)."""
  os.mkfifo(path)
  reads = []
  done = threading.Event()

  def serve():
    while True:
      with open(path, "wb") as writer:  # blocks until a reader opens it
        if done.is_set():
          return
        reads.append(path)
        with contextlib.suppress(BrokenPipeError):
          writer.write(data)

  thread = threading.Thread(target=serve, daemon=True)
  thread.start()
  try:
    yield reads
  finally:
    done.set()
    reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # frees the writer
    thread.join(10)
    os.close(reader)


def _vocab_file_added(path):
  def edit(config):
    config["config"]["preprocessor"]["config"]["vocab_file"] = path
  return edit


def _tokenizer_as_preprocessor(path):
  def edit(config):
    config["config"]["preprocessor"] = keras.saving.serialize_keras_object(
        InGraphTokenizer(DEMO_VOCAB))
    config["config"]["preprocessor"]["config"]["vocab_file"] = path
  return edit


@pytest.mark.parametrize("tampering", [_vocab_file_added,
                                       _tokenizer_as_preprocessor])
def test_a_keras_file_whose_config_names_a_path_is_refused_unread(
    tmp_path, tampering):
  """A .keras file's vocabulary is its asset: a config naming a vocab_file
  (the preprocessor's, or a tokenizer put in its place) is refused before
  the path is opened (here a FIFO, which would block a reader)."""
  path = saved_raw_text_classifier(tmp_path)
  fifo = str(tmp_path / "passwd")
  rewrite_keras_file(path, tampering(fifo))
  with fifo_of(fifo, open(DEMO_VOCAB, "rb").read()) as reads:
    with pytest.raises(ValueError,
                       match="'vocab_file' names a path|is not a "
                             "BertPreprocessor"):
      keras.saving.load_model(path)
    assert not reads


def test_a_tokenizer_config_naming_a_path_is_refused_by_keras():
  """InGraphTokenizer.from_config reads the vocab_file it is given, but
  not under Keras' safe-mode deserialization, which loading a .keras file
  runs."""
  serialized = keras.saving.serialize_keras_object(
      InGraphTokenizer(DEMO_VOCAB))
  with pytest.raises(ValueError, match="'vocab_file'"):
    keras.saving.deserialize_keras_object(serialized)


def test_a_keras_file_whose_vocabulary_outgrows_the_encoder_is_refused(
    tmp_path):
  """The asset has the size the preprocessor's config gives, and that is
  no more than the encoder's vocab_size (1974, the demo vocabulary's)."""
  path = saved_raw_text_classifier(tmp_path)

  def add_tokens(members):
    name, = [name for name in members if name.endswith("/vocab.txt")]
    members[name] += b"".join(b"extra%d\n" % index for index in range(10))

  def declare_them(config):
    config["config"]["preprocessor"]["config"]["vocab_size"] = 1984

  rewrite_keras_file(path, edit_files=add_tokens)
  with pytest.raises(ValueError,
                     match="vocabulary asset has 1984 tokens, but the "
                           "preprocessor's vocab_size is 1974"):
    keras.saving.load_model(path)
  rewrite_keras_file(path, declare_them)
  with pytest.raises(ValueError,
                     match="BertClassifier: the preprocessor's vocabulary has "
                           "1984 tokens, but the encoder's vocab_size is 1974"):
    keras.saving.load_model(path)


@functools.cache
def transformers_reference():
  """transformers' and sentence-transformers' own outputs on the committed
  fixture folders (tests/fixtures/huggingface/
  make_transformers_tokenization.py)."""
  with open(os.path.join(FIXTURES_DIR, "huggingface",
                         "transformers_tokenization.json"),
            encoding="utf-8") as reader:
    return json.load(reader)


@pytest.mark.parametrize("folder", sorted(
    transformers_reference()["embedders"]))
def test_an_embedder_folder_encodes_special_tokens_as_sentence_transformers(
    folder):
  """Texts holding [MASK], [SEP], [CLS], [PAD], [UNK] and a 101-character
  word, and a prompt holding [SEP]: sentence-transformers' embeddings."""
  reference = transformers_reference()
  expected = reference["embedders"][folder]
  model = bert_tf.load_pretrained(os.path.join(FIXTURES_DIR, folder)).model
  assert model.preprocessor.tokenization_rules == "transformers"
  texts = reference["embedder_texts"]
  assert_as_sentence_transformers(model.encode(texts),
                                  expected["embeddings"])
  assert_as_sentence_transformers(
      model.encode(texts, prompt=reference["prompt"]), expected["prompted"])


@pytest.mark.parametrize("folder", sorted(
    transformers_reference()["cross_encoders"]))
def test_a_cross_encoder_folder_scores_special_tokens_as_sentence_transformers(
    folder):
  reference = transformers_reference()
  model = bert_tf.load_pretrained(os.path.join(FIXTURES_DIR, folder)).model
  firsts, seconds = map(list, zip(*reference["cross_pairs"]))
  assert_as_sentence_transformers(
      model.predict((firsts, seconds), verbose=0)["scores"],
      reference["cross_encoders"][folder])


def test_a_hugging_face_classifier_packs_and_tokenises_as_transformers():
  """BertClassifier.from_pretrained(a BertForSequenceClassification
  folder): an empty second text stays a pair, two long texts are cut as
  transformers cuts them, [SEP] and [MASK] in text are kept whole, a
  101-character word is [UNK]; its logits are transformers'."""
  reference = transformers_reference()["classifier"]
  model = bert_tf.BertClassifier.from_pretrained(
      os.path.join(FIXTURES_DIR, reference["folder"]),
      max_seq_length=reference["max_length"])
  assert model.preprocessor.tokenization_rules == "transformers"
  firsts, seconds = map(list, zip(
      *transformers_reference()["cross_pairs"]))
  np.testing.assert_allclose(
      model.predict((firsts, seconds), verbose=0)["logits"],
      reference["logits"], rtol=0, atol=1e-5)


def test_an_original_checkpoint_keeps_the_original_s_rules():
  """A directory of bert_config.json and a TF checkpoint was trained by
  the original: its preprocessor splits [MASK] into pieces, as the
  original; load_pretrained's preprocessor() follows each directory's."""
  directory = os.path.join(FIXTURES_DIR, "community_checkpoint",
                           "biobert_style")
  model = bert_tf.BertClassifier.from_pretrained(directory, num_labels=2)
  assert model.preprocessor.tokenization_rules == "original"
  assert bert_tf.load_pretrained(directory).preprocessor() \
      .tokenization_rules == "original"
  folder = os.path.join(FIXTURES_DIR, "huggingface", "transformers5_classifier")
  assert bert_tf.load_pretrained(folder).preprocessor() \
      .tokenization_rules == "transformers"


def test_the_rules_travel_in_a_keras_file_and_pair_packing_reads_as_them(
    tmp_path):
  """get_config holds tokenization_rules; a config that names them
  pair_packing loads as the same rules."""
  layer = bert_tf.BertPreprocessor(DEMO_VOCAB, True, 8,
                                   tokenization_rules="transformers")
  model = keras.Sequential([keras.Input((), dtype="string"), layer])
  path = str(tmp_path / "model.keras")
  model.save(path)
  text = ["a [MASK] " + "x" * 101]
  loaded = keras.saving.load_model(path).layers[0]
  assert loaded.tokenization_rules == "transformers"
  np.testing.assert_array_equal(loaded(text)["input_ids"],
                                layer(text)["input_ids"])

  def renamed(config):
    layer_config, = [layer["config"] for layer in config["config"]["layers"]
                     if layer["class_name"] == "BertPreprocessor"]
    layer_config["pair_packing"] = layer_config.pop("tokenization_rules")

  rewrite_keras_file(path, renamed)
  assert keras.saving.load_model(path).layers[0].tokenization_rules == \
      "transformers"


@pytest.mark.parametrize("max_seq_length", ["32", 32.0, True, None, 2])
def test_max_seq_length_is_checked_where_it_is_given(max_seq_length):
  message = "^" + re.escape(f"max_seq_length={max_seq_length!r}: expected "
                            f"an integer of at least 3")
  with pytest.raises(ValueError, match=message):
    bert_tf.BertPreprocessor(DEMO_VOCAB, True, max_seq_length)
  if max_seq_length is None:
    return
  folder = os.path.join(FIXTURES_DIR, "huggingface", "transformers5_classifier")
  with pytest.raises(ValueError, match=message):
    bert_tf.BertClassifier.from_pretrained(folder,
                                           max_seq_length=max_seq_length)
  with pytest.raises(ValueError, match=message):
    bert_tf.load_pretrained(folder).preprocessor(max_seq_length)
