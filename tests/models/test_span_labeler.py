"""BertSpanLabeler: run_squad's model, its checkpoint names, Keras'
compile/fit with start and end positions as targets, and with a
BertSpanPreprocessor, run_squad's answers and training on raw text."""

import dataclasses
import json
import random
import re

import keras
import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from bert_tf import tokenization
from bert_tf.data import batching
from bert_tf.models.span_labeler import ANSWER_SETTINGS
from bert_tf.tasks.squad import answers as squad_answers, examples as squad
from bert_tf.tasks.squad.serving import squad_serving
from bert_tf.text.squad import features as squad_features
from bert_tf.text.squad.examples import Paragraph
from bert_tf.text.squad.answer_options import AnswerOptions
from tests.support.helpers import (assert_fit_reaches_the_runs_checkpoint,
                                   random_inputs, run_script, tiny_config)
from tests.support.keras_harness import run_model_test
from tests.support.squad_fixtures import DEMO_VOCAB, synthetic_squad

INPUT_NAMES = ("input_ids", "input_mask", "segment_ids")


def inputs():
  return {name: value for name, value in random_inputs(tiny_config()).items()
          if name in INPUT_NAMES}


def test_is_a_keras_model():
  run_model_test(bert_tf.BertSpanLabeler(tiny_config()), inputs())


def test_checkpoint_names_are_run_squads(tmp_path):
  model = bert_tf.BertSpanLabeler(tiny_config())
  path = bert_tf.save_checkpoint(model, str(tmp_path / "model.ckpt-1"))
  shapes = dict(tf.train.list_variables(path))
  assert shapes["cls/squad/output_weights"] == [2, 32]
  assert shapes["cls/squad/output_bias"] == [2]


def test_compiled_loss_on_start_and_end_positions_is_run_squads():
  """Targets [batch, 2] (start, end): the compiled sparse cross-entropy is
  the mean of the start and end losses, as the original's run_squad."""
  model = bert_tf.BertSpanLabeler(tiny_config())
  model.compile(loss=keras.losses.SparseCategoricalCrossentropy(
      from_logits=True), metrics=["sparse_categorical_accuracy"])
  positions = np.array([[1, 3], [0, 0], [5, 9]], np.int32)
  results = model.evaluate(inputs(), positions, batch_size=3, verbose=0,
                           return_dict=True)
  outputs = model(inputs())
  expected = np.mean([
      keras.losses.sparse_categorical_crossentropy(
          positions[:, index], outputs[name], from_logits=True)
      for index, name in enumerate(("start_logits", "end_logits"))])
  np.testing.assert_allclose(results["loss"], expected, rtol=1e-5)
  assert 0 <= results["sparse_categorical_accuracy"] <= 1


def test_compiles_default_weighs_each_example_as_the_runner():
  """compile()'s loss is SpanObjective's, one number per example: a
  sample weight per example scales it (Keras' own sparse cross-entropy
  refused [batch] weights on [batch, 2] targets at the first step), and
  the runners' mean over the real examples is the loss scaled back."""
  model = bert_tf.BertSpanLabeler(tiny_config())
  model.compile()
  positions = np.array([[1, 3], [0, 0], [5, 9]], np.int32)
  real = np.array([1.0, 1.0, 0.0], np.float32)
  weighted = model.evaluate(inputs(), positions, sample_weight=real,
                            batch_size=3, verbose=0, return_dict=True)
  outputs = model(inputs())
  features = {"start_positions": positions[:, 0],
              "end_positions": positions[:, 1], "is_real_example": real}
  trainer_loss = (model.objective.loss_numerators(outputs, features)[
      "span_loss"] / model.objective.loss_denominators(features)["span_loss"])
  np.testing.assert_allclose(weighted["loss"] * 3 / 2, trainer_loss,
                             rtol=1e-5)


# Raw text: run_squad's windows, answers and features.
SEQ = {"max_seq_length": 32, "doc_stride": 8, "max_query_length": 8}


def records(path):
  """(questions, contexts), (answer_texts, answer_starts, is_impossible)
  of a SQuAD v2.0 file's questions, in file order."""
  rows = [(qa["question"], paragraph["context"],
           *((qa["answers"][0]["text"], qa["answers"][0]["answer_start"])
             if qa["answers"] else ("", -1)), qa["is_impossible"])
          for article in json.loads(path.read_text())["data"]
          for paragraph in article["paragraphs"] for qa in paragraph["qas"]]
  columns = [list(column) for column in zip(*rows)]
  return tuple(columns[:2]), tuple(columns[2:])


def text_model(seed=0, **settings):
  keras.utils.set_random_seed(seed)
  config = tiny_config(vocab_size=len(open(DEMO_VOCAB).readlines()))
  return bert_tf.BertSpanLabeler(config, preprocessor=(
      bert_tf.BertSpanPreprocessor(DEMO_VOCAB, True, **{**SEQ, **settings})))


def test_predict_answers_as_predictions_json_and_serve_text(tmp_path):
  """predict((questions, contexts)) gives run_squad's answers of the same
  model and settings (a v2.0 model): predictions.json's text and
  null_odds.json's odds, and serve_text's answer, offsets and numbers
  exactly; contexts of several windows, a batch split in two."""
  synthetic_squad(tmp_path / "dev.json", seed=2, num_paragraphs=5,
                  questions_per_paragraph=2)
  examples = squad.read_squad_examples(str(tmp_path / "dev.json"), False)
  x = ([e.question_text for e in examples],
       [e.paragraph.context * 3 for e in examples])
  model = text_model()
  for example, context in zip(examples, x[1]):
    example.paragraph = Paragraph.from_context(context)
  tokenizer = tokenization.FullTokenizer(DEMO_VOCAB, True)
  features = squad_features.convert_examples_to_features(
      examples, tokenizer, is_training=False, **SEQ)
  assert len(features["input_ids"]) > 2 * len(examples)
  outputs = model({name: features[name] for name in INPUT_NAMES})
  options = AnswerOptions(n_best_size=3, max_answer_length=5,
                          version_2_with_negative=True)
  expected = squad_answers.predict_answers(
      examples, features, outputs["start_logits"].numpy(),
      outputs["end_logits"].numpy(), tokenizer, options)
  # A threshold that answers some questions, not all.
  options = dataclasses.replace(options, null_score_diff_threshold=float(
      np.median(list(expected.null_odds.values()))))
  expected = squad_answers.predict_answers(
      examples, features, outputs["start_logits"].numpy(),
      outputs["end_logits"].numpy(), tokenizer, options)
  settings = {name: getattr(options, name) for name in ANSWER_SETTINGS}
  ours = model.predict(x, batch_size=5, **settings)
  assert ours["answer"].tolist() == [expected.predictions[e.qas_id]
                                     for e in examples]
  np.testing.assert_allclose(
      ours["null_odds"], [expected.null_odds[e.qas_id] for e in examples],
      atol=1e-5)
  assert 0 < ours["has_answer"].sum() < len(examples)

  _, signatures = squad_serving(model, model.preprocessor.tokenizer,
                                SEQ["max_seq_length"], SEQ["doc_stride"],
                                SEQ["max_query_length"], options)
  served = signatures["serve_text"](question=tf.constant(x[0]),
                                    context=tf.constant(x[1]))
  assert sorted(served) == sorted(ours)
  for name, value in served.items():
    value = value.numpy()
    if name == "answer":
      value = [text.decode() for text in value]
    np.testing.assert_array_equal(ours[name], value, err_msg=name)


def test_fit_on_records_trains_on_run_squads_features(tmp_path):
  """fit on records trains on what run_squad trains on: its features of
  them (the same arrays run_squad makes from the file), and from the same
  checkpoint on the same batches (run_squad's dataset and --seed) the
  same weights and Adam slots, bit for bit, dropout on."""
  synthetic_squad(tmp_path / "train.json", seed=0, num_paragraphs=6)
  config = tiny_config(vocab_size=len(open(DEMO_VOCAB).readlines()))
  (tmp_path / "bert_config.json").write_text(config.to_json_string())
  init = bert_tf.save_checkpoint(bert_tf.BertSpanLabeler(config),
                                 str(tmp_path / "init" / "model.ckpt-0"))
  result = run_script("run_squad.py", {
      "do_train": True, "train_file": tmp_path / "train.json",
      "version_2_with_negative": True, "vocab_file": DEMO_VOCAB,
      "bert_config_file": tmp_path / "bert_config.json",
      "init_checkpoint": init, "output_dir": tmp_path / "output",
      "train_batch_size": 8, "num_train_epochs": 1.5, "learning_rate": 1e-3,
      "warmup_proportion": 0.34, "seed": 1, **SEQ})
  assert result.returncode == 0, result.stderr[-3000:]

  x, y = records(tmp_path / "train.json")
  # run_squad shuffles a training file's questions once, so.
  order = list(range(len(x[0])))
  random.Random(squad.TRAIN_SHUFFLE_SEED).shuffle(order)
  x, y = (tuple([column[i] for i in order] for column in part)
          for part in (x, y))
  keras.utils.set_random_seed(1)
  model = bert_tf.BertSpanLabeler(config, preprocessor=(
      bert_tf.BertSpanPreprocessor(DEMO_VOCAB, True, **SEQ)))
  features, _ = model.preprocessor.training_features(*x, *y)
  expected = squad_features.convert_examples_to_features(
      squad.read_squad_examples(str(tmp_path / "train.json"), True, True),
      tokenization.FullTokenizer(DEMO_VOCAB, True), is_training=True, **SEQ)
  for name in squad_features.TRAIN_RECORD_FEATURES:
    np.testing.assert_array_equal(features[name], expected[name], name)
  dataset = batching.training_dataset(features, 8, seed=1).map(
      lambda batch: ({name: batch[name] for name in INPUT_NAMES},
                     tf.stack([batch["start_positions"],
                               batch["end_positions"]], axis=1)))
  bert_tf.load_checkpoint(model, init)
  model.compile(optimizer=bert_tf.create_optimizer(1e-3, 3, 1))
  assert_fit_reaches_the_runs_checkpoint(model, dataset, tmp_path)


def test_fit_on_records_is_fit_on_their_features(tmp_path):
  """fit((questions, contexts), (texts, starts, is_impossible)) takes a
  step on run_squad's features of the records (training_features), a
  record's sample_weight on each of its windows."""
  synthetic_squad(tmp_path / "train.json", seed=0, num_paragraphs=3)
  x, y = records(tmp_path / "train.json")
  config = tiny_config(vocab_size=len(open(DEMO_VOCAB).readlines()),
                       hidden_dropout_prob=0.0,
                       attention_probs_dropout_prob=0.0)
  preprocessor = bert_tf.BertSpanPreprocessor(DEMO_VOCAB, True, **SEQ)
  features, kept = preprocessor.training_features(*x, *y)
  weights = np.arange(len(x[0])) % 3 / 2
  trained = []
  for fit_x, fit_y, weight in (
      (x, y, weights),
      ({name: features[name] for name in INPUT_NAMES},
       np.stack([features["start_positions"], features["end_positions"]], 1),
       weights[kept][features["example_index"]])):
    keras.utils.set_random_seed(0)
    model = bert_tf.BertSpanLabeler(config, preprocessor=preprocessor)
    model.compile(optimizer=keras.optimizers.SGD(0.1))
    model.fit(fit_x, fit_y, sample_weight=weight, shuffle=False,
              batch_size=len(features["input_ids"]), verbose=0)
    trained.append(model.get_weights())
  for ours, theirs in zip(*trained):
    np.testing.assert_array_equal(ours, theirs)


def test_records_are_checked_and_skipped_as_run_squad(caplog):
  model = text_model()
  model.compile()
  x = (["what ?", "what ?"], ["a red car", "a blue ship"])
  with pytest.raises(ValueError, match=re.escape(
      "BertSpanLabeler.fit: record 1: answer_start 9 (text of 4 characters) "
      "is outside its context of 11 characters")):
    model.fit(x, (["red car", "ship"], [2, 9]))
  with pytest.raises(ValueError, match=re.escape(
      "BertSpanLabeler.fit: y's answer_starts has 1 entries for 2 "
      "questions")):
    model.fit(x, (["red car", "ship"], [2]))
  with pytest.raises(ValueError, match=re.escape(
      "BertSpanLabeler.fit: no record's answer is found")):
    model.fit(x, (["red cat", "blue shop"], [2, 2]))
  assert "Could not find answer: 'red car' vs. 'red cat'" in caplog.text


def test_bad_questions_are_refused_in_one_line():
  model = text_model()
  for x, message in (
      ((["what ?"], ["a", "b"]), "BertSpanLabeler.predict: 1 questions and "
       "2 contexts; expected one context per question"),
      (("what ?", "a red car"), "BertSpanLabeler.predict: one text, not a "
       "batch; pass a list: predict((['what ?'], ['a red car']))"),
      ((["what ?"], [None]), "BertSpanLabeler.predict: x[1] (contexts)[0] is "
       "None; expected a str")):
    with pytest.raises(ValueError, match=re.escape(message)):
      model.predict(x)
  with pytest.raises(ValueError, match="n_best_size answer questions"):
    model.predict(inputs(), n_best_size=3)


def test_a_keras_file_keeps_the_preprocessor(tmp_path):
  model = text_model()
  x = (["which thing ?", "what ?"], ["a red car by the door " * 4, ""])
  model.save(tmp_path / "model.keras")
  loaded = keras.saving.load_model(tmp_path / "model.keras")
  assert isinstance(loaded.preprocessor, bert_tf.BertSpanPreprocessor)
  assert loaded.preprocessor.get_config() == model.preprocessor.get_config()
  # The windows of every question, and their logits.
  expected = model(x)
  assert expected["start_logits"].shape[1] == SEQ["max_seq_length"]
  for name, value in loaded(x).items():
    np.testing.assert_array_equal(value, expected[name], err_msg=name)


def test_from_pretrained_windows_are_run_squads_and_rules_are_kept(tmp_path):
  """from_pretrained's preprocessor: run_squad's 384 where the positions
  allow (here 64), its doc_stride, and its max_query_length where the
  windows have room (here 60, leaving one context piece); a Hugging Face
  folder's (transformers' rules) takes ids, and refuses run_squad's
  training features in one line, since they follow the original's
  rules."""
  model = text_model()
  model.save_pretrained(tmp_path / "original", format="original")
  pretrained = bert_tf.BertSpanLabeler.from_pretrained(tmp_path / "original")
  preprocessor = pretrained.preprocessor
  assert (preprocessor.max_seq_length, preprocessor.doc_stride,
          preprocessor.max_query_length) == (64, 128, 60)
  model.save_pretrained(tmp_path / "huggingface")
  folder = bert_tf.BertSpanLabeler.from_pretrained(tmp_path / "huggingface")
  assert folder.preprocessor.tokenization_rules == "transformers"
  ids = inputs()
  assert folder.predict(ids, verbose=0)["start_logits"].shape == \
      ids["input_ids"].shape
  with pytest.raises(ValueError, match=re.escape(
      "BertSpanPreprocessor.training_features: run_squad's answers and "
      "features follow the original's tokenization rules, and this "
      "preprocessor follows transformers'")):
    folder.fit((["what ?"], ["a red car"]), (["red"], [2]))


PIPELINE_DIR = "tests/fixtures/question_answering"


def test_a_transformers_folder_answers_as_the_question_answering_pipeline():
  """A transformers-written BertForQuestionAnswering folder answers as
  transformers 4's pipeline("question-answering") (its answers, committed
  by make_fixture.py): windows of a long context, words widened,
  candidates of equal lower-cased text merged, the null answer, top_k."""
  with open(f"{PIPELINE_DIR}/pipeline_answers.json", encoding="utf-8") as f:
    reference = json.load(f)
  model = bert_tf.BertSpanLabeler.from_pretrained(
      f"{PIPELINE_DIR}/bert_for_question_answering")
  x = (reference["questions"], reference["contexts"])
  for settings, expected in zip(reference["settings"],
                                reference["answers"]):
    found = model.predict(x, **reference["windows"], **settings)
    for answers, answers_expected in zip(found, expected):
      if settings["top_k"] == 1:
        answers = [answers]
      assert [(answer["answer"], answer["start"], answer["end"])
              for answer in answers] == [
                  (answer["answer"], answer["start"], answer["end"])
                  for answer in answers_expected], settings
      np.testing.assert_allclose(
          [answer["score"] for answer in answers],
          [answer["score"] for answer in answers_expected], atol=1e-4)


def test_each_decodings_arguments_are_refused_for_the_others_models():
  """run_squad's answer arguments for a model of transformers' rules, the
  pipeline's for one of the original's, and bad pipeline arguments and
  texts are refused in one line."""
  folder = bert_tf.BertSpanLabeler.from_pretrained(
      f"{PIPELINE_DIR}/bert_for_question_answering")
  x = (["what ?"], ["a red car by the door"])
  for model, kwargs, message in (
      (text_model(), {"max_answer_len": 3}, "BertSpanLabeler.predict: "
       "max_answer_len= is transformers' question-answering pipeline's; a "
       "model of the original's tokenization rules answers as run_squad, "
       "which takes n_best_size, "),
      (folder, {"n_best_size": 3}, "BertSpanLabeler.predict: n_best_size= "
       "is run_squad's; a model of transformers' tokenization rules answers "
       "as transformers' question-answering pipeline, which takes top_k, "),
      (folder, {"top_k": 0}, "BertSpanLabeler.predict: top_k=0; expected "
       "an integer of at least 1"),
      (folder, {"max_seq_len": 65}, "BertSpanLabeler.predict: "
       "max_seq_len=65 is more than the model's 64 positions"),
      (folder, {"max_seq_len": 16, "doc_stride": 17}, "BertSpanLabeler."
       "predict: doc_stride=17 is more than max_seq_len=16")):
    with pytest.raises(ValueError, match=re.escape(message)):
      model.predict(x, **kwargs)
  for x, message in (
      ((["what ?", ""], ["a", "b"]), "BertSpanLabeler.predict: x[0] "
       "(questions)[1] is empty; the pipeline takes non-empty questions"),
      ((["what ?"], ["a [SEP] b"]), "BertSpanLabeler.predict: contexts[0] "
       "holds '[SEP]', a token transformers keeps whole"),
      ((["what is it " * 5], ["a b c " * 20]), "BertSpanLabeler.predict: "
       "question 0: the question's 15 pieces leave no room"),
      ((["what ?"], ["a b c " * 20]), "BertSpanLabeler.predict: question 0: "
       "doc_stride=12 must be less than the 11 context pieces")):
    with pytest.raises(ValueError, match=re.escape(message)):
      folder.predict(x, max_seq_len=16, doc_stride=12)
