"""BertMultipleChoice: the paper's SWAG model and its checkpoint names; on
raw text, its predictions and training run_swag's."""

import shutil

import keras
import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from bert_tf.data import batching
from bert_tf.tasks.swag import examples as swag
from tests.support.helpers import (assert_fit_reaches_the_runs_checkpoint,
                                   run_script, tiny_config)
from tests.support.keras_harness import run_model_test
from tests.support.squad_fixtures import DEMO_VOCAB
from tests.support.swag_fixtures import synthetic_swag

VOCAB_SIZE = len(open(DEMO_VOCAB, encoding="utf-8").readlines())
# Two contexts, four whole endings each.
TEXTS = (["A man sits at the piano.", "Café « naïve » 東京"],
         [["He plays a song.", "He eats the piano.", "", "He sleeps."],
          ["Zoë orders a coffee.", "It rains.", "日本語", "x " * 40]])


def choices():
  """Two examples of four choices: [2, 4, 16] inputs, padded at times."""
  rng = np.random.default_rng(0)
  input_mask = (np.arange(16) < rng.integers(8, 17, (2, 4, 1))).astype(
      np.int32)
  return {"input_ids": rng.integers(5, 99, (2, 4, 16)).astype(np.int32)
                       * input_mask,
          "input_mask": input_mask,
          "segment_ids": (np.arange(16) >= 6).astype(np.int32) * input_mask}


def test_each_choice_is_scored_on_its_own():
  # Weights of the original's scale (0.02) can leave a changed choice's
  # logit within float error of the old one, as they did once in CI.
  model = bert_tf.models.BertMultipleChoice(tiny_config(initializer_range=0.2))
  inputs = choices()
  outputs = model(inputs)
  assert outputs["logits"].shape == (2, 4)
  np.testing.assert_allclose(np.sum(outputs["probabilities"], -1), 1.0,
                             atol=1e-6)
  # A choice's logit is the one its own sequence gets alone.
  flat = {name: value.reshape(8, 16) for name, value in inputs.items()}
  alone = model.choice_head(model.encoder(flat)["pooled_output"])
  np.testing.assert_allclose(outputs["logits"], np.reshape(alone, (2, 4)),
                             atol=1e-5)
  changed = {name: value.copy() for name, value in inputs.items()}
  changed["input_ids"][1, 2, 1:4] = [5, 6, 7]
  logits = model(changed)["logits"]
  np.testing.assert_allclose(logits[0], outputs["logits"][0], atol=1e-6)
  assert abs(logits[1, 2] - outputs["logits"][1, 2]) > 1e-3


def test_checkpoint_names_are_plain_as_run_classifiers(tmp_path):
  model = bert_tf.models.BertMultipleChoice(tiny_config())
  path = bert_tf.save_checkpoint(model, str(tmp_path / "model.ckpt-1"))
  shapes = dict(tf.train.list_variables(path))
  assert shapes["output_weights"] == [1, 32]
  assert shapes["output_bias"] == [1]
  restored = bert_tf.models.BertMultipleChoice(tiny_config())
  bert_tf.load_checkpoint(restored, path)
  np.testing.assert_allclose(restored(choices())["logits"],
                             model(choices())["logits"], atol=1e-6)
  run_model_test(model, choices())


def text_model():
  """A tiny model of DEMO_VOCAB that takes (contexts, endings)."""
  config = tiny_config(vocab_size=VOCAB_SIZE, initializer_range=0.2)
  return bert_tf.BertMultipleChoice(
      config, preprocessor=bert_tf.BertMultipleChoicePreprocessor(
          DEMO_VOCAB, True, 16))


def test_text_is_packed_as_the_ids_it_stands_for(tmp_path):
  """On (contexts, endings), any number of endings a call, the outputs of
  the preprocessor's ids; predict's too; the choice is the likeliest
  ending; a .keras file keeps the preprocessor."""
  model = text_model()
  for texts in (TEXTS, (TEXTS[0][:1], [TEXTS[1][0][:2]]),
                (TEXTS[0], [row + ["a fifth ending"] for row in TEXTS[1]])):
    outputs = model(texts)
    np.testing.assert_array_equal(
        outputs["probabilities"],
        model(dict(model.preprocessor(texts)))["probabilities"])
    assert outputs["probabilities"].shape == (len(texts[0]),
                                              len(texts[1][0]))
    np.testing.assert_array_equal(outputs["choice"],
                                  np.argmax(outputs["probabilities"], -1))
  predicted = model.predict(TEXTS, verbose=0)
  np.testing.assert_allclose(predicted["probabilities"],
                             model(TEXTS)["probabilities"], atol=1e-6)
  model.save(tmp_path / "model.keras")
  loaded = keras.saving.load_model(tmp_path / "model.keras")
  assert isinstance(loaded.preprocessor,
                    bert_tf.BertMultipleChoicePreprocessor)
  np.testing.assert_array_equal(loaded(TEXTS)["logits"],
                                model(TEXTS)["logits"])


@pytest.mark.parametrize("x, message", [
    (("a man sits", [["he eats"]]), "x\\[0\\] is one str; expected a list of "
     "contexts: predict\\(\\(\\[context\\], \\[endings\\]\\)\\)"),
    (["a man sits"], "x is a list; expected a pair \\(contexts, endings\\)"),
    ((["a"], [["b"]], ["c"]), "x is a tuple of 3; expected a pair"),
    ((["a", "b"], [["c"]]), "x\\[1\\] holds endings for 1 contexts, but "
     "x\\[0\\] has 2"),
    ((["a", "b"], [["c", "d"], ["e"]]), "x\\[1\\]\\[1\\] holds 1 endings, "
     "x\\[1\\]\\[0\\] 2; every context of a call needs the same number"),
    ((["a"], [[]]), "x\\[1\\]\\[0\\] holds no endings"),
    ((["a"], ["b c"]), "x\\[1\\]\\[0\\] is str; expected a list of that "
     "context's endings"),
    ((["a"], [["b", None]]), "x\\[1\\]\\[0\\]\\[1\\] is None; expected a str"),
    (([3], [["b"]]), "x\\[0\\]\\[0\\] is int; expected a str"),
    ((["a"], [["\ud800"]]), "x\\[1\\]\\[0\\]\\[0\\] holds a lone surrogate"),
    ((["a"], np.array([[["b"]]])), "x\\[1\\]\\[0\\]\\[0\\] is list; expected a "
     "str"),
    ((tf.constant(["a"]), tf.constant(["b"])), "endings has shape \\(1,\\); "
     "expected \\[batch, choices\\]"),
    ((tf.constant(["a"]), tf.constant([[1, 2]])), "endings holds int32; "
     "expected strings"),
    (([], []), "x holds no examples"),
])
def test_bad_text_is_refused_in_one_line(x, message):
  with pytest.raises(ValueError, match=f"^BertMultipleChoice.predict: "
                                       f"{message}") as error:
    text_model().predict(x, verbose=0)
  assert "\n" not in str(error.value)


def test_a_dataset_of_bare_pairs_is_refused_in_one_line():
  """Keras reads a dataset's pairs as (x, y): the model gets the contexts
  alone."""
  dataset = tf.data.Dataset.from_tensor_slices(TEXTS).batch(2)
  with pytest.raises(ValueError, match=r"^BertMultipleChoice: x is a "
                     r"SymbolicTensor; expected a pair \(contexts, endings\)"
                     r".*\(a dataset yields \(\(contexts, endings\), "
                     r"labels\)\)$"):
    text_model().predict(dataset, verbose=0)


def test_a_model_without_a_preprocessor_says_how_to_get_one():
  with pytest.raises(ValueError, match="^BertMultipleChoice.predict: the "
                     "model takes ids .*BertMultipleChoicePreprocessor"):
    bert_tf.BertMultipleChoice(tiny_config()).predict(TEXTS, verbose=0)


def test_keras_fit_on_text_reaches_run_swags_weights(tmp_path):
  """Three steps of run_swag and three of compile() and fit on raw
  (contexts, endings) and labels, from the same checkpoint, on the same
  rows in the same order (run_swag's shuffle, same --seed), at run_swag's
  default learning rate and warmup: the same weights and Adam slots, bit
  for bit, dropout on. (predict on a run's output_dir gives its
  test_results.tsv: tests/run_scripts/test_run_swag.py.)"""
  data_dir = tmp_path / "data"
  data_dir.mkdir()
  synthetic_swag(data_dir / "train.csv", 0, 16)
  config = tiny_config(vocab_size=VOCAB_SIZE)
  init = tmp_path / "init"
  bert_tf.save_checkpoint(bert_tf.BertMultipleChoice(config),
                          str(init / "model.ckpt-0"))
  (init / "bert_config.json").write_text(config.to_json_string())
  shutil.copy(DEMO_VOCAB, init / "vocab.txt")
  result = run_script("run_swag.py", {
      "do_train": True, "data_dir": data_dir,
      "vocab_file": DEMO_VOCAB, "bert_config_file": init / "bert_config.json",
      "init_checkpoint": init / "model.ckpt-0",
      "output_dir": tmp_path / "output", "max_seq_length": 16,
      "train_batch_size": 8, "num_train_epochs": 1.5, "seed": 1})
  assert result.returncode == 0, result.stderr[-3000:]

  examples = swag.read_swag(str(data_dir / "train.csv"), labelled=True)
  rows = {"context": np.array([example.context for example in examples]),
          "endings": np.array([[f"{example.start_ending} {ending}"
                                for ending in example.endings]
                               for example in examples]),
          "label": np.array([example.label for example in examples])}
  # As run_swag: the global seed first, then the model, then the batches.
  keras.utils.set_random_seed(1)
  model = bert_tf.BertMultipleChoice.from_pretrained(init,
                                                     max_seq_length=16)
  model.compile()
  dataset = batching.training_dataset(rows, 8, seed=1).map(
      lambda batch: ((batch["context"], batch["endings"]), batch["label"]))
  assert_fit_reaches_the_runs_checkpoint(model, dataset, tmp_path)
