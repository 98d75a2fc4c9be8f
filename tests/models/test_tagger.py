"""BertTagger and BertFeatureTagger: run_ner's models and their names;
BertTagger on raw text and (words, tags), as run_ner's export and
training, and on a transformers folder as transformers' pipeline."""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from bert_tf import tokenization
from bert_tf.checkpoints.original import tf_checkpoints
from bert_tf.data import batching
from bert_tf.optimization.optimizers import create_optimizer
from bert_tf.tasks.ner import examples as conll, features as ner_features
from bert_tf.tasks.ner.serving import ner_serving
from tests.support.helpers import (PROJECT_DIR,
                                   assert_fit_reaches_the_runs_checkpoint,
                                   random_inputs, run_script, tiny_config)
from tests.support.squad_fixtures import DEMO_VOCAB
from tests.support.keras_harness import run_model_test

INPUT_NAMES = ("input_ids", "input_mask", "segment_ids")


def inputs():
  return {name: value for name, value in random_inputs(tiny_config()).items()
          if name in INPUT_NAMES}


def test_the_fine_tuned_tagger_saves_and_loads_its_head(tmp_path):
  model = bert_tf.models.BertTagger(tiny_config(), num_labels=9)
  outputs = model(inputs())
  assert outputs["logits"].shape == (3, 16, 9)
  np.testing.assert_allclose(outputs["probabilities"],
                             tf.nn.softmax(outputs["logits"]), atol=1e-6)
  path = bert_tf.save_checkpoint(model, str(tmp_path / "model.ckpt-1"))
  shapes = dict(tf.train.list_variables(path))
  assert shapes["cls/ner/output_weights"] == [9, 32]
  assert shapes["cls/ner/output_bias"] == [9]
  restored = bert_tf.models.BertTagger(tiny_config(), num_labels=9)
  bert_tf.load_checkpoint(restored, path)
  np.testing.assert_allclose(restored(inputs())["logits"], outputs["logits"],
                             atol=1e-6)


def feature_tagger(combination="weighted_sum"):
  return bert_tf.models.BertFeatureTagger(tiny_config(), 9, (-2, -1),
                                          combination, lstm_units=8)


def test_the_feature_tagger_trains_only_its_head(tmp_path):
  model = feature_tagger()
  assert model(inputs())["logits"].shape == (3, 16, 9)
  names = bert_tf.checkpoints.model_weights.checkpoint_variables(model)
  trainable = {id(variable) for variable in model.trainable_variables}
  assert {name for name, variable in names.items()
          if id(variable) in trainable} == {
              name for name in names if name.startswith("ner/")}
  assert len([name for name in names if name.startswith("ner/")]) == \
      2 + 2 + 2 * 2 * 3
  optimizer = create_optimizer(1e-3, 10, 1)
  optimizer.build(model.trainable_variables)
  path = bert_tf.save_checkpoint(model, str(tmp_path / "model.ckpt-1"),
                                 optimizer=optimizer)
  shapes = dict(tf.train.list_variables(path))
  assert "bert/encoder/layer_0/output/dense/kernel" in shapes
  assert not any(name.startswith("bert/") and name.endswith("adam_m")
                 for name in shapes)
  assert shapes["ner/layer_weights/adam_v"] == [2]
  assert shapes["ner/bilstm_0/fw/kernel"] == [32, 32]
  restored = feature_tagger()
  bert_tf.load_checkpoint(restored, path)
  restored_optimizer = create_optimizer(1e-3, 10, 1)
  assert tf_checkpoints.load_optimizer_slots(
      restored, restored_optimizer, tf_checkpoints.open_reader(path),
      path) == 0
  np.testing.assert_allclose(restored(inputs())["logits"],
                             model(inputs())["logits"], atol=1e-6)


def test_padding_does_not_reach_the_bilstm():
  """The BiLSTM reads real tokens only: the outputs at them do not change
  with how much padding follows."""
  model = feature_tagger("concat")
  short = {name: value[:1, :10] for name, value in inputs().items()}
  padded = {name: np.pad(value, [(0, 0), (0, 6)])
            for name, value in short.items()}
  np.testing.assert_allclose(model(padded)["logits"][:, :10],
                             model(short)["logits"], atol=1e-5)


@pytest.mark.parametrize("combination", ["weighted_sum", "concat"])
def test_the_feature_tagger_is_a_keras_model(combination):
  run_model_test(feature_tagger(combination), inputs())


def test_the_fine_tuned_tagger_is_a_keras_model():
  run_model_test(bert_tf.BertTagger(tiny_config(), num_labels=9), inputs())


@pytest.mark.parametrize("make, message", [
    (lambda: bert_tf.models.BertTagger(tiny_config(), 0),
     "BertTagger: num_labels=0"),
    (lambda: bert_tf.models.BertFeatureTagger(tiny_config(), 0, (-1,),
                                              "concat"),
     "BertFeatureTagger: num_labels=0"),
    (lambda: bert_tf.models.BertFeatureTagger(tiny_config(), 9, (-1,),
                                              "concat", lstm_units=0),
     "BertFeatureTagger: lstm_units=0"),
    (lambda: bert_tf.models.BertFeatureTagger(tiny_config(), 9, (2,),
                                              "concat"),
     "BertFeatureTagger selected_layers: layer 2 does not exist"),
    (lambda: bert_tf.models.BertFeatureTagger(tiny_config(), 9, (),
                                              "concat"),
     "BertFeatureTagger: selected_layers is empty"),
])
def test_invalid_arguments_are_refused_when_the_model_is_built(make,
                                                                message):
  with pytest.raises(ValueError, match=message):
    make()


# Raw text and (words, tags): BertTagger with a BertTaggerPreprocessor.

LABELS = list(conll.LABELS)
PIPELINE_DIR = f"{PROJECT_DIR}/tests/fixtures/token_classification"
TEXTS = ["John Smith went to Paris.", "", "   \t ", "!!!...,,,", "Ed",
         "Café  au\u00a0lait, 東京 😀 Ça\u0301va.",
         "U.S. troops left Iraq in 2011, said Mr. O'Neil.",
         "a" * 250 + " word",
         " ".join(["Kesteven Pemberton went to Ottoburg"] * 12)]


@pytest.fixture(scope="module")
def text_tagger():
  config = tiny_config(vocab_size=len(open(DEMO_VOCAB).readlines()),
                       initializer_range=0.5)
  keras.utils.set_random_seed(3)
  return bert_tf.BertTagger(
      config, 9, labels=LABELS,
      preprocessor=bert_tf.BertTaggerPreprocessor(DEMO_VOCAB, True, 16))


def serve_text(model):
  """run_ner's export's serve_text for the model (a tokenizer of its
  preprocessor's vocabulary)."""
  _, signatures = ner_serving(model, model.preprocessor.tokenizer,
                              model.preprocessor.max_seq_length)
  return signatures["serve_text"]


def test_predict_gives_serve_texts_entities(text_tagger):
  """Words split and tagged as run_ner's export tags them (long texts in
  windows of whole words with context), its entities as predict's, in
  batches of any size; called on texts, the model is serve_text."""
  served = serve_text(text_tagger)(tf.constant(TEXTS))
  expected = [[{"text": text[start:end], "label": kind.decode(),
                "start": start, "end": end}
               for kind, start, end in zip(kinds, starts, ends) if start >= 0]
              for text, kinds, starts, ends in zip(
                  TEXTS, served["entity_type"].numpy().tolist(),
                  served["entity_start"].numpy().tolist(),
                  served["entity_end"].numpy().tolist())]
  assert sum(map(len, expected)) > 20
  assert text_tagger.predict(TEXTS) == expected
  assert text_tagger.predict(np.array(TEXTS), batch_size=2) == expected
  called = text_tagger(TEXTS[:2])
  for name, value in served.items():
    value = value.numpy()[:2, :called[name].shape[1]]
    if name == "tag_probability":
      np.testing.assert_allclose(called[name], value, atol=1e-6)
    else:
      np.testing.assert_array_equal(called[name], value, err_msg=name)


def test_a_keras_file_keeps_the_preprocessor(text_tagger, tmp_path):
  text_tagger.save(tmp_path / "tagger.keras")
  loaded = keras.saving.load_model(tmp_path / "tagger.keras")
  assert isinstance(loaded.preprocessor, bert_tf.BertTaggerPreprocessor)
  assert loaded.predict(TEXTS) == text_tagger.predict(TEXTS)


def test_a_transformers_folder_predicts_as_the_pipeline():
  """transformers 5's pipeline("token-classification") on its own
  BertForTokenClassification folder (make_fixture.py), each aggregation
  strategy: "first" by default, the same groups, words, offsets and
  scores."""
  with open(f"{PIPELINE_DIR}/pipeline_entities.json",
            encoding="utf-8") as reader:
    reference = json.load(reader)
  model = bert_tf.BertTagger.from_pretrained(
      f"{PIPELINE_DIR}/bert_for_token_classification")
  assert isinstance(model.preprocessor, bert_tf.BertTaggerPreprocessor)
  texts = reference["texts"]
  for strategy, expected in reference["entities"].items():
    found = model.predict(texts, aggregation_strategy=strategy.upper())
    if strategy == "first":
      assert model.predict(texts) == found
    for text, ours, theirs in zip(texts, found, expected):
      assert [{**entity, "score": None} for entity in ours] == [
          {**entity, "score": None} for entity in theirs], (strategy, text)
      np.testing.assert_allclose([entity["score"] for entity in ours],
                                 [entity["score"] for entity in theirs],
                                 atol=1e-5)
  assert model.predict(texts, ignore_labels=["O", "LOC"]) == [
      [entity for entity in entities if entity["entity_group"] != "LOC"]
      for entities in model.predict(texts)]


def test_fit_on_words_and_tags_takes_run_ners_steps(tmp_path):
  """(words, tags) become run_ner --nodocument_context's features, and
  three steps of compile()'s defaults on run_ner's batches of them (its
  dataset, same --seed), each word's first piece weighted by label_mask
  as fit(words, tags) weighs it, are run_ner's three steps: the same
  weights and Adam slots."""
  sentences = [(["Kesteven", "went", "to", "Ottoburg", "."],
                ["B-PER", "O", "O", "B-LOC", "O"]),
               (["Fenwick", "Holdings", "hired", "Jasper"],
                ["B-ORG", "I-ORG", "O", "B-PER"]),
               (["Elvish", "songs", "in", "Zandipur", "and", "Velmora"],
                ["B-MISC", "O", "O", "B-LOC", "O", "B-LOC"]),
               (["Melanie", "Wickersham"], ["B-PER", "I-PER"])]
  data_dir = tmp_path / "data"
  data_dir.mkdir()
  (data_dir / "eng.train").write_text("".join(
      "".join(f"{word} NN O {tag}\n" for word, tag in zip(*sentence)) + "\n"
      for sentence in sentences))
  config = tiny_config(vocab_size=len(open(DEMO_VOCAB).readlines()),
                       hidden_dropout_prob=0.0,
                       attention_probs_dropout_prob=0.0)
  (tmp_path / "bert_config.json").write_text(config.to_json_string())
  init = bert_tf.save_checkpoint(
      bert_tf.BertTagger(config, 9, labels=LABELS),
      str(tmp_path / "init" / "model.ckpt-0"))
  result = run_script("run_ner.py", {
      "do_train": True, "data_dir": data_dir, "vocab_file": DEMO_VOCAB,
      "bert_config_file": tmp_path / "bert_config.json",
      "init_checkpoint": init, "output_dir": tmp_path / "output",
      "document_context": False, "max_seq_length": 24,
      "train_batch_size": 2, "num_train_epochs": 1.5, "learning_rate": 1e-3,
      "warmup_proportion": 0.34, "seed": 1})
  assert result.returncode == 0, result.stderr[-3000:]
  preprocessor = bert_tf.BertTaggerPreprocessor(DEMO_VOCAB, True, 24)
  words, tags = [words for words, _ in sentences], [t for _, t in sentences]
  features = preprocessor.features(
      words, [[LABELS.index(tag) for tag in row] for row in tags])
  runners = ner_features.convert_sentences(
      conll.read_conll(str(data_dir / "eng.train")),
      tokenization.FullTokenizer(DEMO_VOCAB, True), 24)
  for name, value in runners.items():
    np.testing.assert_array_equal(features[name], value, err_msg=name)
  keras.utils.set_random_seed(1)
  model = bert_tf.BertTagger(config, 9, labels=LABELS,
                             preprocessor=preprocessor)
  dataset = batching.training_dataset(features, 2, seed=1).map(
      lambda batch: ({name: batch[name] for name in INPUT_NAMES},
                     batch["label_ids"], batch["label_mask"]))
  bert_tf.load_checkpoint(model, init)
  model.compile(learning_rate=1e-3, warmup_proportion=0.34)
  assert_fit_reaches_the_runs_checkpoint(model, dataset, tmp_path)


def test_fit_on_words_and_tags_learns_them(text_tagger):
  """fit(words, tags) trains on their features, each word's first piece
  weighted 1: the loss falls, and evaluate takes them too."""
  model = bert_tf.BertTagger(text_tagger.config, 9, labels=LABELS,
                             preprocessor=text_tagger.preprocessor)
  model.compile(learning_rate=1e-2)
  words = [["Kesteven", "went", "to", "Ottoburg"], ["Jasper", "left"]]
  tags = [["B-PER", "O", "O", "B-LOC"], ["B-PER", "O"]]
  history = model.fit(words, tags, epochs=4, batch_size=2, verbose=0,
                      validation_data=(words, tags))
  losses = history.history["loss"]
  assert losses[-1] < losses[0]
  assert model.evaluate(words, tags, verbose=0)[0] == pytest.approx(
      history.history["val_loss"][-1], rel=1e-5)


@pytest.mark.parametrize("call, message", [
    (lambda model: model.predict("John"),
     r"one text, not a batch; pass a list: predict\(\['John'\]\)"),
    (lambda model: model.predict(["a", None]), r"x\[1\] is None"),
    (lambda model: model.predict([b"\xff"]), r"x\[0\] is not valid UTF-8"),
    (lambda model: model.predict(["a"], aggregation_strategy="mean"),
     "aggregation_strategy='mean'; expected one of 'none', 'simple'"),
    (lambda model: model.predict(["a"], stride=4),
     "stride= is an argument of transformers' pipeline"),
    (lambda model: model.predict(["a"], ignore_labels=[]),
     "ignore_labels applies to the pipeline's aggregation strategies"),
    (lambda model: model.predict(["a"], steps=2),
     "texts take batch_size .and verbose. alone, not steps"),
    (lambda model: model.predict(inputs(), aggregation_strategy="first"),
     "aggregation_strategy and ignore_labels apply to raw text"),
    (lambda model: model.fit([["John", "went"]], [["B-PER"]]),
     r"BertTagger.fit: y\[0\] is not a list of 2 tags"),
    (lambda model: model.fit([["John"]], [["B-FOO"]]),
     r"y\[0\]\[0\] is 'B-FOO', not one of the model's labels: O, B-PER"),
    (lambda model: model.fit([["John"], []], [["O"], []]),
     r"x\[1\] has no words"),
    (lambda model: model.fit([["John", 3]], [["O", "O"]]),
     r"x\[0\]\[1\] is int; expected a word"),
    (lambda model: model.fit([["John"]], [["O"]], sample_weight=[1.0]),
     "sample_weight with lists of words"),
    (lambda model: model.evaluate([["John"]], ["O"]),
     r"BertTagger.evaluate: y\[0\] is not a list of 1 tags"),
])
def test_bad_text_and_examples_are_refused_in_one_line(text_tagger, call,
                                                        message):
  with pytest.raises(ValueError, match=message):
    call(text_tagger)


def test_transformers_special_tokens_in_text_are_refused():
  model = bert_tf.BertTagger.from_pretrained(
      f"{PIPELINE_DIR}/bert_for_token_classification")
  with pytest.raises(ValueError, match=r"x\[1\] holds '\[MASK\]', a token "
                     "transformers keeps whole"):
    model.predict(["fine", "Mr. [MASK] met"])


def test_a_tagger_without_labels_tags_no_text():
  model = bert_tf.BertTagger(
      tiny_config(vocab_size=len(open(DEMO_VOCAB).readlines())), 9,
      preprocessor=bert_tf.BertTaggerPreprocessor(DEMO_VOCAB, True, 16))
  with pytest.raises(ValueError, match="BertTagger.predict: the model has "
                     "no labels"):
    model.predict(["John"])


def test_the_feature_tagger_refuses_text_naming_the_tagger():
  with pytest.raises(ValueError, match="BertFeatureTagger.predict: the "
                     "model takes ids .* a BertTagger takes raw text"):
    feature_tagger().predict(["John went"])
