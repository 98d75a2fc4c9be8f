"""Task models in one call: Model.from_pretrained(dir, ...) on every kind of
model directory, and compile() with the task's defaults, so that
fine-tuning on strings is two lines with run_classifier's semantics."""

import logging
import types

import keras
import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from bert_tf.objectives import cross_entropy
from bert_tf.tasks import runner
from tests.support.helpers import PROJECT_DIR, SHARED_DIR

HUGGINGFACE = f"{SHARED_DIR}/reference/huggingface"
CLASSIFIER = f"{HUGGINGFACE}/bert_for_sequence_classification"
PRETRAINING = f"{HUGGINGFACE}/bert_for_pretraining"
QUESTION_ANSWERING = f"{HUGGINGFACE}/bert_for_question_answering"
COMMUNITY = f"{PROJECT_DIR}/tests/fixtures/community_checkpoint/biobert_style"
CROSS_ENCODER = f"{PROJECT_DIR}/tests/fixtures/sentence_transformers/" \
    "cross_encoder"
EMBEDDER = f"{PROJECT_DIR}/tests/fixtures/sentence_transformers/today_mean"

TEXTS = [f"text number {index} about {'cats' if index % 2 else 'dogs'}"
         for index in range(20)]
LABELS = np.array([index % 2 for index in range(20)])


def same_weights(first, second):
  return all(np.array_equal(one, other) for one, other in
             zip(first.get_weights(), second.get_weights()))


def head_messages(caplog, level=logging.INFO):
  """The INFO lines of loading.py; at WARNING, every logger's: a warning
  is given once."""
  return [record.getMessage() for record in caplog.records
          if record.levelno == level and (
              level == logging.WARNING
              or record.name == "bert_tf.models.from_pretrained")]


@pytest.mark.shared
def test_a_classifier_comes_with_its_head_labels_and_preprocessor(caplog):
  caplog.set_level(logging.INFO)
  model = bert_tf.BertClassifier.from_pretrained(CLASSIFIER,
                                                 max_seq_length=24)
  reference = bert_tf.load_pretrained(CLASSIFIER).model
  assert model.labels == reference.labels and model.num_labels == 3
  assert model.preprocessor.max_seq_length == 24
  inputs = model.preprocessor(tf.constant(["a cat, a dog"]))
  np.testing.assert_array_equal(model(inputs)["logits"],
                                reference(inputs)["logits"])
  assert head_messages(caplog) == [
      f"BertClassifier: its head from {CLASSIFIER} (2 variables)"]


@pytest.mark.shared
def test_other_num_labels_make_a_new_head_on_the_same_encoder(caplog):
  caplog.set_level(logging.INFO)
  model = bert_tf.BertClassifier.from_pretrained(CLASSIFIER, num_labels=2)
  reference = bert_tf.load_pretrained(CLASSIFIER).model
  assert model.num_labels == 2 and model.labels is None
  assert same_weights(model.encoder, reference.encoder)
  # A warning, as transformers' "Some weights of ... were not initialized
  # from the model checkpoint": Python shows warnings by default.
  assert head_messages(caplog, logging.WARNING) == [
      f"BertClassifier: output_weights, output_bias start at random, not "
      f"loaded from {CLASSIFIER}: its head has 3 labels and the model's 2 "
      "(output_weights [3, 32] against [2, 32]); train the model on a task "
      "before using its predictions"]
  # The default length: 128, or the position table where that is shorter.
  assert model.preprocessor.max_seq_length == 64


@pytest.mark.shared
@pytest.mark.parametrize("model_class, arguments", [
    (bert_tf.BertClassifier, {"num_labels": 2}),
    (bert_tf.BertTagger, {"num_labels": 5}),
    (bert_tf.BertSpanLabeler, {}),
    (bert_tf.BertMultipleChoice, {}),
    (bert_tf.BertEmbedder, {}),
    (bert_tf.BertPretrainer, {}),
])
def test_every_task_model_from_a_pretraining_folder(model_class, arguments):
  model = model_class.from_pretrained(PRETRAINING, **arguments)
  reference = bert_tf.load_pretrained(PRETRAINING).model
  assert isinstance(model, model_class)
  assert same_weights(model.encoder, reference.encoder)
  if isinstance(model, bert_tf.BertPretrainer):
    assert same_weights(model, reference)


def test_a_community_checkpoint_and_a_sentence_transformers_folder():
  model = bert_tf.BertClassifier.from_pretrained(COMMUNITY, num_labels=4,
                                                 max_seq_length=16)
  assert model.num_labels == 4 and model.preprocessor.max_seq_length == 16
  assert model(["a protein"])["logits"].shape == (1, 4)
  cross_encoder = bert_tf.BertClassifier.from_pretrained(CROSS_ENCODER)
  reference = bert_tf.load_pretrained(CROSS_ENCODER).model
  pair = (["a question"], ["an answer"])
  np.testing.assert_array_equal(cross_encoder(pair)["scores"],
                                reference(pair)["scores"])
  embedder = bert_tf.BertEmbedder.from_pretrained(EMBEDDER)
  assert embedder.preprocessor.max_seq_length == \
      bert_tf.load_pretrained(EMBEDDER).model.preprocessor.max_seq_length


def test_a_pretrainer_from_a_sentence_transformers_folder(caplog):
  """A masked-LM preprocessor of the folder's length and tokenization
  rules; the folder's encoder; the masked-LM and next-sentence heads new,
  and named."""
  caplog.set_level(logging.INFO)
  pretrainer = bert_tf.BertPretrainer.from_pretrained(EMBEDDER)
  reference = bert_tf.load_pretrained(EMBEDDER).model
  preprocessor = pretrainer.preprocessor
  assert isinstance(preprocessor, bert_tf.BertMaskedLMPreprocessor)
  assert (preprocessor.max_seq_length, preprocessor.tokenization_rules) == (
      reference.preprocessor.max_seq_length,
      reference.preprocessor.tokenization_rules)
  assert same_weights(pretrainer.encoder, reference.encoder)
  new = [name for name in bert_tf.BertPretrainer.checkpoint_head_names]
  assert head_messages(caplog, logging.WARNING) == [
      f"BertPretrainer: {', '.join(new)} start at random, not loaded from "
      f"{EMBEDDER}; train the model on a task before using its predictions"]


def test_a_directory_save_pretrained_wrote_keeps_its_labelled_head(tmp_path):
  model = bert_tf.BertClassifier.from_pretrained(
      COMMUNITY, num_labels=2, labels=["negative", "positive"])
  model.save_pretrained(tmp_path / "original", format="original")
  again = bert_tf.BertClassifier.from_pretrained(tmp_path / "original")
  assert again.labels == ["negative", "positive"]
  assert same_weights(again, model)


@pytest.mark.shared
def test_no_head_and_no_num_labels_is_refused():
  with pytest.raises(ValueError, match="bert_for_pretraining: no "
                     "BertClassifier head to take num_labels from; pass "
                     "num_labels="):
    bert_tf.BertClassifier.from_pretrained(PRETRAINING)


def fine_tuned(compile_model, **fit_arguments):
  keras.utils.set_random_seed(3)
  model = bert_tf.BertClassifier.from_pretrained(COMMUNITY, num_labels=2,
                                                 max_seq_length=16)
  compile_model(model)
  model.fit(TEXTS, LABELS, verbose=0, **fit_arguments)
  return model


@pytest.mark.shared
def test_a_folder_without_a_pooler_names_it_and_lora_trains_it(caplog):
  """transformers' BertForQuestionAnswering has no pooler: the warning
  names the classifier's random pooler with its new head, and LoRA trains
  both (tests/models/test_lora.py)."""
  caplog.set_level(logging.INFO)
  model = bert_tf.BertClassifier.from_pretrained(QUESTION_ANSWERING,
                                                 num_labels=2)
  assert head_messages(caplog, logging.WARNING) == [
      "BertClassifier: bert/pooler/dense/kernel, bert/pooler/dense/bias, "
      "output_weights, output_bias start at random, not loaded from "
      f"{QUESTION_ANSWERING}; train the model on a task before using its "
      "predictions"]
  model.enable_lora(2)
  assert {weight.path for weight in model.encoder.trainable_weights
          if "lora" not in weight.path} == {"bert/pooler/kernel",
                                            "bert/pooler/bias"}


def test_compile_without_arguments_is_run_classifiers_training():
  """compile() then fit on strings: AdamWeightDecay at run_classifier's
  default learning rate, warmed up over its 10% of int(examples / batch size
  * epochs) steps, softmax cross-entropy; the same weights, bit for bit, as
  the optimizer and loss given by hand (which tests/training/test_keras_fit
  holds to run_classifier's own)."""
  steps = int(20 / 4 * 2)
  ours = fine_tuned(lambda model: model.compile(), batch_size=4, epochs=2)
  by_hand = fine_tuned(lambda model: model.compile(
      optimizer=bert_tf.create_optimizer(5e-5, steps, int(0.1 * steps)),
      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
      metrics=["sparse_categorical_accuracy"]), batch_size=4, epochs=2)
  assert same_weights(ours, by_hand)
  assert not same_weights(ours, fine_tuned(lambda model: model.compile(),
                                           batch_size=4, epochs=1))
  assert "sparse_categorical_accuracy" in ours.get_metrics_result()


def test_the_default_schedule_spans_the_steps_fit_runs():
  """10 examples in batches of 8 for 3 epochs: Keras runs ceil(10 / 8) * 3
  = 6 steps, the last of each epoch short, and the learning rate decays
  over those 6, reaching 0 at the last, as the original's does at
  num_train_steps. run_classifier, whose batches are full and run across
  epochs, keeps the original's count, int(10 / 8 * 3) = 3."""
  model = bert_tf.BertClassifier.from_pretrained(COMMUNITY, num_labels=2,
                                                 max_seq_length=16)
  rates = []
  model.fit(TEXTS[:10], LABELS[:10], batch_size=8, epochs=3, verbose=0,
            callbacks=[keras.callbacks.LambdaCallback(
                on_train_batch_begin=lambda *_, **__: rates.append(
                    float(model.optimizer.learning_rate)))])
  np.testing.assert_allclose(rates, [5e-5 * (1 - step / 6)
                                     for step in range(1, 7)], rtol=1e-5)
  options = types.SimpleNamespace(do_train=True, train_batch_size=8,
                                  num_train_epochs=3)
  # pylint: disable-next=protected-access
  assert runner._num_train_steps(TEXTS[:10], options) == 3


def test_a_validation_split_is_left_out_as_keras_splits_it():
  """Keras trains on the first floor(10 * 0.75) = 7 examples: 2 batches of
  4 an epoch."""
  model = bert_tf.BertClassifier.from_pretrained(COMMUNITY, num_labels=2,
                                                 max_seq_length=16)
  model.fit(TEXTS[:10], LABELS[:10], batch_size=4, epochs=2,
            validation_split=0.25, verbose=0)
  assert int(model.optimizer.iterations) == 4
  assert model.optimizer.get_config()["learning_rate"]["config"][
      "num_train_steps"] == 4


def test_a_fit_that_takes_no_step_leaves_the_schedule_to_the_next():
  """Keras refuses sample weights of another length only after the
  schedule was sized: the next fit sizes it again."""
  model = bert_tf.BertClassifier.from_pretrained(COMMUNITY, num_labels=2,
                                                 max_seq_length=16)
  with pytest.raises(ValueError, match="cardinality"):
    model.fit(TEXTS[:10], LABELS[:10], batch_size=2, verbose=0,
              sample_weight=np.ones(3))
  model.fit(TEXTS[:10], LABELS[:10], batch_size=5, verbose=0)
  assert model.optimizer.get_config()["learning_rate"]["config"][
      "num_train_steps"] == 2


@pytest.mark.parametrize("arguments, message", [
    ({"batch_size": 0}, "batch_size=0 must be an integer >= 1"),
    ({"batch_size": "8"}, "batch_size='8' must be an integer >= 1"),
    ({"batch_size": 2.5}, "batch_size=2.5 must be an integer >= 1"),
    ({"epochs": 0}, "epochs=0 must be an integer >= 1"),
    ({"steps_per_epoch": -1}, "steps_per_epoch=-1 must be an integer >= 1"),
])
def test_fits_numbers_are_checked_before_any_step(arguments, message):
  model = bert_tf.BertClassifier.from_pretrained(COMMUNITY, num_labels=2,
                                                 max_seq_length=16)
  with pytest.raises(ValueError, match=f"^BertClassifier.fit: {message}$"):
    model.fit(TEXTS, LABELS, verbose=0, **arguments)
  assert int(model.optimizer.iterations) == 0


@pytest.mark.parametrize("arguments, message", [
    ({"learning_rate": "1e-3"}, "learning_rate='1e-3' must be a number > 0"),
    ({"learning_rate": -1.0}, "learning_rate=-1.0 must be a number > 0"),
    ({"learning_rate": float("nan")}, "learning_rate=nan must be a number"),
    ({"warmup_proportion": 2}, "warmup_proportion=2 must be a share from 0 "
     "to 1"),
    ({"warmup_proportion": -0.5}, "warmup_proportion=-0.5 must be a share"),
])
def test_compiles_numbers_are_checked_and_a_refusal_keeps_the_model(
    arguments, message):
  model = bert_tf.BertClassifier.from_pretrained(COMMUNITY, num_labels=2,
                                                 max_seq_length=16)
  model.compile(learning_rate=1e-3)
  with pytest.raises(ValueError, match=f"^BertClassifier.compile: "
                                       f"{message}"):
    model.compile(**arguments)
  assert model.get_compile_config()["learning_rate"] == 1e-3


def test_a_fit_after_the_schedule_ended_warns(caplog):
  """compile()'s default decays to 0 over the first fit: a second trains
  at rate 0, and says so."""
  model = bert_tf.BertClassifier.from_pretrained(COMMUNITY, num_labels=2,
                                                 max_seq_length=16)
  model.fit(TEXTS[:8], LABELS[:8], batch_size=4, verbose=0)
  model.fit(TEXTS[:8], LABELS[:8], batch_size=4, verbose=0)
  assert [record.getMessage() for record in caplog.records
          if record.levelno == logging.WARNING
          and record.name == "bert_tf.models.fit_model"] == [
              "BertClassifier.fit: the learning rate is 0 at step 2: the "
              "optimizer's schedule has ended (compile()'s default ends "
              "with the first fit); compile() again to train on"]


def test_a_model_saved_before_its_first_fit_is_sized_by_it(tmp_path):
  keras.utils.set_random_seed(3)
  model = bert_tf.BertClassifier.from_pretrained(COMMUNITY, num_labels=2,
                                                 max_seq_length=16)
  model.compile(learning_rate=1e-4, warmup_proportion=0.2)
  model.save(tmp_path / "model.keras")
  loaded = keras.saving.load_model(tmp_path / "model.keras")
  loaded.fit(TEXTS, LABELS, batch_size=4, validation_split=0.2, verbose=0)
  schedule = loaded.optimizer.get_config()["learning_rate"]
  assert schedule["config"] == {
      "init_lr": 1e-4, "num_train_steps": 4, "num_warmup_steps": 0}


def test_defaults_of_each_task():
  config = bert_tf.BertConfig(vocab_size=30, hidden_size=8,
                              num_hidden_layers=1, num_attention_heads=2,
                              intermediate_size=8)
  regressor = bert_tf.BertClassifier(config, num_labels=1)
  regressor.compile()
  assert regressor.loss.function is cross_entropy.squared_error
  multi_label = bert_tf.BertClassifier(
      config, num_labels=3, problem_type="multi_label_classification")
  multi_label.compile()
  assert multi_label.loss.function is cross_entropy.binary_cross_entropy
  embedder = bert_tf.BertEmbedder(config)
  embedder.compile()
  assert isinstance(embedder.loss, bert_tf.MultipleNegativesRankingLoss)


def test_a_dataset_of_unknown_or_infinite_size_needs_steps_per_epoch():
  model = bert_tf.BertClassifier.from_pretrained(COMMUNITY, num_labels=2,
                                                 max_seq_length=16)
  model.compile()
  dataset = tf.data.Dataset.from_tensor_slices((TEXTS, LABELS)).filter(
      lambda text, label: True).batch(4)
  with pytest.raises(ValueError, match="BertClassifier.fit: a dataset of "
                     "unknown or infinite size; pass steps_per_epoch"):
    model.fit(dataset)
  with pytest.raises(ValueError, match="BertClassifier.fit: a dataset of "
                     "unknown or infinite size"):
    model.fit(dataset.repeat())
  model.fit(dataset, steps_per_epoch=2, verbose=0)


@pytest.mark.shared
def test_bfloat16_weights_for_inference(tmp_path):
  """dtype="bfloat16", as keras-hub's from_preset(dtype=...): every weight
  bfloat16, the outputs those of float32 to bfloat16's precision, kept by a
  .keras file; a model's dtype alone (Keras' layers take the global
  policy) is refused."""
  ours = bert_tf.BertClassifier.from_pretrained(CLASSIFIER, dtype="bfloat16")
  assert {weight.dtype for weight in ours.weights} == {"bfloat16"}
  assert keras.config.dtype_policy().name == "float32"
  texts = ["a cat, a dog", "the gene binds"]
  full = bert_tf.BertClassifier.from_pretrained(CLASSIFIER)(texts)["logits"]
  logits = ours(texts)["logits"]
  assert logits.dtype == tf.float32
  np.testing.assert_allclose(logits, full, atol=0.05)
  ours.save(tmp_path / "model.keras")
  loaded = keras.saving.load_model(tmp_path / "model.keras")
  assert {weight.dtype for weight in loaded.weights} == {"bfloat16"}
  np.testing.assert_array_equal(loaded(texts)["logits"], logits)
  with pytest.raises(ValueError, match="BertClassifier: dtype='bfloat16' is "
                     "not the global dtype policy"):
    bert_tf.BertClassifier(ours.config, num_labels=2, dtype="bfloat16")


def test_a_transformers_5_folder_without_vocab_txt():
  """transformers 5 writes tokenizer.json and no vocab.txt: the
  preprocessor reads its vocabulary from there; the head is reused."""
  folder = f"{PROJECT_DIR}/tests/fixtures/huggingface/transformers5_classifier"
  model = bert_tf.BertClassifier.from_pretrained(folder, max_seq_length=16)
  reference = bert_tf.load_pretrained(folder)
  assert model.labels == reference.labels
  inputs = reference.preprocessor(16)(tf.constant(["a cat, a dog"]))
  np.testing.assert_array_equal(model(["a cat, a dog"])["logits"],
                                reference.model(inputs)["logits"])
