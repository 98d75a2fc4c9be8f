"""quantize(): every Dense layer of a model; on a trained classifier, the
predictions of the float model, in Keras and exported; the modes bert_tf
does not describe, layer filters and checkpoints of quantized kernels are
refused. benchmarks/quantization.py measures the same on real SST-2."""

import os
import random
import weakref

import keras
import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from tests.support.export_runners import PACKAGES, RUNNERS
from tests.support.helpers import tiny_config
from tests.support.keras_harness import GPTQ_CONFIG
from tests.support.keyword_task import VOCAB, keyword_sentences

# Of the held-out predictions, the share a quantized model must keep.
AGREEMENT = 0.97


# The Dense layers of the encoder tiny_config builds: each transformer
# block's six, and the pooler.
ENCODER_DENSE = {f"bert/layer_{index}/{name}" for index in range(2)
                 for name in ("attention/query", "attention/key",
                              "attention/value", "attention_output",
                              "intermediate", "output")} | {"bert/pooler"}


def keyword_texts(count, seed):
  """The keyword task's sentences and their labels (an int array)."""
  rows = list(keyword_sentences(random.Random(seed), count))
  return ([text for text, _ in rows],
          np.array([int(label) for _, label in rows]))


@pytest.fixture(scope="module")
def trained():
  """A raw-text classifier fitted on the keyword task, and held-out text."""
  keras.utils.set_random_seed(0)
  config = tiny_config(vocab_size=len(open(VOCAB).readlines()))
  model = bert_tf.BertClassifier(
      config, 2, preprocessor=bert_tf.BertPreprocessor(VOCAB, True, 16))
  model.compile(optimizer=keras.optimizers.Adam(2e-3),
                loss=keras.losses.SparseCategoricalCrossentropy(
                    from_logits=True),
                metrics=["sparse_categorical_accuracy"])
  texts, labels = keyword_texts(512, seed=0)
  model.fit(texts, labels, batch_size=32, epochs=4, verbose=0)
  held_out, held_out_labels = keyword_texts(300, seed=1)
  accuracy = model.evaluate(held_out, held_out_labels, verbose=0,
                            return_dict=True)["sparse_categorical_accuracy"]
  assert accuracy > 0.9
  return model, held_out


def ids_model(model):
  """The trained classifier without its preprocessor (exports take ids)."""
  clone = bert_tf.BertClassifier(model.config, model.num_labels)
  clone.set_weights(model.get_weights())
  return clone


def agreement(probabilities, expected):
  return float(np.mean(np.argmax(probabilities, -1)
                       == np.argmax(expected, -1)))


@pytest.mark.parametrize("build, head_dense, mode", [
    pytest.param(lambda: bert_tf.BertClassifier(tiny_config(), 2), set(),
                 "int8", id="classifier-int8"),
    pytest.param(lambda: bert_tf.BertPretrainer(tiny_config()),
                 {"predictions/transform"}, "int4", id="pretrainer-int4"),
    pytest.param(lambda: bert_tf.BertEmbedder(
        tiny_config(), dense=[{"units": 8}, {"units": 4}]),
                 {"dense_0", "dense_1"}, "float8", id="embedder-float8")])
def test_quantize_covers_every_dense_layer(build, head_dense, mode):
  """The attention projections, feed-forward layers, pooler, masked-LM
  transform and an embedder's Dense layers; not the word embeddings (the
  masked-LM head shares them) nor the classification heads."""
  model = build()
  model.quantize(mode)
  modes = {layer.path.removeprefix(model.name + "/"): layer.quantization_mode
           for layer in model._flatten_layers()
           if layer.quantization_mode is not None}
  assert modes == dict.fromkeys(ENCODER_DENSE | head_dense, mode)
  assert model.encoder.embeddings.weights[0].dtype == "float32"


@pytest.mark.parametrize("mode", ["int8", "int4", "float8"])
def test_quantized_predictions_agree_with_float(trained, mode):
  model, texts = trained
  inputs = model.preprocessor(tf.constant(texts))
  expected = model.predict(texts, verbose=0)["probabilities"]
  quantized = ids_model(model)
  quantized.quantize(mode)
  got = quantized.predict(inputs, verbose=0)["probabilities"]
  assert agreement(got, expected) >= AGREEMENT
  assert np.abs(got - expected).max() < 0.1


@pytest.mark.parametrize("mode, config", [
    ("int16", None), ("gptq", None), ("awq", None), (None, GPTQ_CONFIG),
    ("gptq", GPTQ_CONFIG), (None, "gptq"), ("int16", "int8")])
def test_bert_tf_refuses_other_modes_before_keras(mode, config):
  """bert_tf's refusal, not Keras' demand for a GPTQConfig or its list of
  modes, nor a string config quietly replacing the mode; the model stays
  float."""
  model = bert_tf.BertClassifier(tiny_config(), 2)
  with pytest.raises(ValueError, match=r"BertClassifier.quantize\('(int16|gptq|"
                                       r"awq)'\): bert_tf models support "
                                       r"'int8', 'int4', 'float8'$"):
    model.quantize(mode, config=config)
  assert model.quantized_to is None


def test_quantize_frees_the_float_kernels():
  """Each kernel it replaces is freed by the time quantize returns, as
  Keras frees it (bert_tf collects once, where Keras collects per layer;
  benchmarks/quantization.py times both)."""
  model = bert_tf.BertClassifier(tiny_config(), 2)
  kernels = [weakref.ref(layer._kernel) for layer in model._flatten_layers()
             if isinstance(layer, keras.layers.Dense)]
  model.quantize("int8")
  assert len(kernels) == len(ENCODER_DENSE)
  assert [kernel() for kernel in kernels] == [None] * len(kernels)


def test_quantize_refuses_filters():
  """A .keras file keeps the mode alone, and its from_config quantizes
  every Dense layer: a file of some would not load."""
  model = bert_tf.BertClassifier(tiny_config(), 2)
  with pytest.raises(ValueError, match=r"^BertClassifier.quantize: "
                     r"filters='pooler'; bert_tf quantizes every Dense "
                     r"layer$"):
    model.quantize("int8", filters="pooler")
  assert model.quantized_to is None
  assert not any(layer.quantization_mode for layer in model._flatten_layers())


@pytest.mark.parametrize("mode", ["int8", "int4"])
def test_save_checkpoint_refuses_quantized_kernels(mode, tmp_path):
  """Which no loader, the original's or bert_tf's, reads as weights."""
  model = bert_tf.BertClassifier(tiny_config(), 2)
  model.quantize(mode)
  with pytest.raises(ValueError, match=r"^save_checkpoint: the model's "
                     r"bert/encoder/layer_0/attention/self/query/kernel is "
                     r"int8 \(quantized\); a checkpoint holds float weights: "
                     r"save it before quantize\(\)$"):
    bert_tf.save_checkpoint(model, str(tmp_path / "model.ckpt-1"))
  assert not os.listdir(tmp_path)


@pytest.mark.parametrize("mode, export_format, instead", [
    ("int8", "litert", "LiteRT's own int8"),
    ("float8", "litert", "export the float model$"),
    ("float8", "onnx", "or quantize to int8")])
def test_exports_a_converter_cannot_make_are_refused(mode, export_format,
                                                     instead, tmp_path):
  """Before anything is written: the converters fail with their own
  errors (a ConverterError on int8 matmuls, a KeyError on float8)."""
  model = bert_tf.BertClassifier(tiny_config(), 2)
  model.quantize(mode)
  with pytest.raises(ValueError, match=(
      rf"^BertClassifier.export: format='{export_format}' cannot convert "
      rf"kernels quantized to {mode}; .*{instead}")):
    model.export(str(tmp_path / "model"), format=export_format)
  assert not os.listdir(tmp_path)


def test_dynamic_range_int8_litert_agrees_with_float(trained, tmp_path):
  """LiteRT's own int8 (the converter's dynamic range) on the float model."""
  interpreter = pytest.importorskip("ai_edge_litert.interpreter")
  model, texts = trained
  inputs = model.preprocessor(tf.constant(texts))
  ids = ids_model(model)
  expected = ids(inputs)["probabilities"].numpy()
  path = str(tmp_path / "model.tflite")
  ids.export(path, format="litert", verbose=False,
             optimizations=[tf.lite.Optimize.DEFAULT])
  got = interpreter.Interpreter(model_path=path).get_signature_runner()(
      **{name: value.numpy() for name, value in inputs.items()})
  assert agreement(got["probabilities"], expected) >= AGREEMENT


@pytest.mark.parametrize("mode, export_format", [
    ("int8", "onnx"), ("int4", "onnx"), ("int4", "litert")])
def test_a_keras_quantized_model_exports_as_keras_computes(
    trained, mode, export_format, tmp_path):
  """The exports the converters make (the others: test_exports_a_converter_
  cannot_make_are_refused)."""
  model, texts = trained
  inputs = {name: value.numpy() for name, value in
            model.preprocessor(tf.constant(texts[:32])).items()}
  quantized = ids_model(model)
  quantized.quantize(mode)
  expected = quantized(inputs)["probabilities"].numpy()
  for package in PACKAGES[export_format]:
    pytest.importorskip(package)
  file_name, run = RUNNERS[export_format]
  path = str(tmp_path / file_name)
  quantized.export(path, format=export_format, verbose=False)
  got = run(path, inputs)
  np.testing.assert_allclose(got["probabilities"], expected, atol=1e-5)
