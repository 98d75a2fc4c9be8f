"""A .keras file's config is checked against its weights before the model
is built (bert_tf/models/keras_file_sizes.py): a tampered size is refused
at once, in one line naming the field, its value and the weight's shape;
every model, in every form it saves, still loads."""

import io
import json
import math
import shutil
import zipfile

import h5py
import keras
import numpy as np
import pytest

import bert_tf
from bert_tf.models.keras_weight_shapes import model_weights
from bert_tf.models.base import BertKerasModel
from bert_tf.models.classifier import BertNextSentenceClassifier
from bert_tf.text.masked_lm_preprocessor import BertMaskedLMPreprocessor
from tests.support.helpers import tiny_config, within_seconds
from tests.support.keras_harness import EVERY_MODEL, rewrite_keras_file
from tests.support.keyword_task import VOCAB

# A refusal reads the file's metadata alone: well within this.
REFUSED_WITHIN_SECONDS = 5


def _quantized(mode):
  def make(config):
    model = EVERY_MODEL["BertEmbedder"](config)
    model.quantize(mode)
    return model
  return make


def _with_adapters(config):
  model = bert_tf.BertClassifier(config, 3)
  model.enable_lora(4, targets=("query", "intermediate", "output"))
  return model


def _text_config():
  return tiny_config(vocab_size=len(open(VOCAB).readlines()))


# The forms a model saves in that no other test loads from a .keras file
# (keras_harness.run_model_test loads EVERY_MODEL's, and int8's; test_lora,
# test_classifier and test_masked_lm load adapters and preprocessors).
FORMS = {
    "next_sentence": BertNextSentenceClassifier,
    "int4": _quantized("int4"),
    "float8": _quantized("float8"),
    "bfloat16": lambda config: bert_tf.BertClassifier.built_in(
        "bfloat16", config, 3),
    "dense_without_bias": lambda config: bert_tf.BertEmbedder(
        config, dense=[{"units": 8, "activation": "tanh",
                        "use_bias": False}]),
    "concatenated_layers": lambda config: bert_tf.BertFeatureTagger(
        config, 9, (-2, -1), "concat", lstm_units=8),
    "routed_sparse_encoder": lambda config: bert_tf.BertRoutedSparseEncoder(
        config, query_max_length=7, default_route="query"),
}
MODELS = {
    **EVERY_MODEL, **FORMS, "lora": _with_adapters,
    "preprocessor": lambda config: bert_tf.BertClassifier(
        _text_config(), 3,
        preprocessor=bert_tf.BertPreprocessor(VOCAB, True, 16)),
    "masked_lm_preprocessor": lambda config: bert_tf.BertPretrainer(
        _text_config(), preprocessor=BertMaskedLMPreprocessor(VOCAB, True, 16)),
}


@pytest.fixture(scope="module")
def built():
  """MODELS[name](tiny_config()), each built once."""
  models = {}

  def build(name):
    if name not in models:
      models[name] = MODELS[name](tiny_config())
    return models[name]
  return build


@pytest.fixture(scope="module")
def saved(built, tmp_path_factory):
  """(model, path of its .keras file) of MODELS[name], each saved once."""
  directory = tmp_path_factory.mktemp("keras_files")
  files = {}

  def save(name):
    if name not in files:
      path = directory / f"{name}.keras"
      built(name).save(path)
      files[name] = built(name), path
    return files[name]
  return save


def tampered(saved, tmp_path, name, edit_config=None, edit_files=None):
  """A copy of MODELS[name]'s .keras file, rewritten as a tampered one."""
  path = tmp_path / "tampered.keras"
  shutil.copy(saved(name)[1], path)
  rewrite_keras_file(path, edit_config, edit_files)
  return path


def assert_refused(path, expected, load=keras.saving.load_model):
  with within_seconds(REFUSED_WITHIN_SECONDS):
    with pytest.raises(ValueError, match=expected) as refusal:
      load(path)
  assert "\n" not in str(refusal.value)


def _set(*keys_and_value):
  """edit_config setting config[k1][k2]... to the last argument."""
  *keys, value = keys_and_value

  def edit(config):
    for key in keys[:-1]:
      config = config[key]
    config[keys[-1]] = value
  return edit


def _bert(field, value):
  return _set("config", "config", field, value)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_every_form_of_a_model_loads(saved, name):
  model, path = saved(name)
  loaded = keras.saving.load_model(path)
  assert loaded.get_config() == model.get_config()
  for got, expected in zip(loaded.weights, model.weights, strict=True):
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(got),
                                  keras.ops.convert_to_numpy(expected))


@pytest.mark.parametrize("name", sorted(set(MODELS) - {"int4", "float8"}))
def test_the_weights_a_config_sizes_are_the_models(built, name):
  """model_weights counts each value the built model holds."""
  model = built(name)
  weights = model_weights(type(model), model.config, model.get_config(),
                          "config")
  assert sum(math.prod(weight.shape) * weight.copies
             for weight in weights) == model.count_params()


def test_every_model_class_is_among_those_checked(built):
  registered = {
      model_class for name, model_class in
      keras.saving.get_custom_objects().items()
      if name.startswith("bert_tf>") and isinstance(model_class, type)
      and issubclass(model_class, BertKerasModel)}
  assert registered == {type(built(name)) for name in MODELS}


@pytest.mark.parametrize("name, edit, expected", [
    ("BertEncoder", _set("config", "config", "vocab_size", 10**9),
     r"BertEncoder config: vocab_size=1000000000, but model.weights.h5's "
     r"embeddings/vars/0 is \[99, 32\]"),
    ("BertClassifier", _bert("num_hidden_layers", 100_000),
     "num_hidden_layers=100000, but model.weights.h5 holds 2 transformer "
     "blocks"),
    ("BertClassifier", _set("config", "num_labels", 10**9),
     r"num_labels=1000000000, but model.weights.h5's "
     r"layers/classification_head/vars/0 is \[3, 32\]"),
    ("BertTagger", _set("config", "num_labels", 10**9),
     r"num_labels=1000000000, .*classification_head/vars/0 is \[9, 32\]"),
    ("BertSpanLabeler", _bert("max_position_embeddings", 10**9),
     r"max_position_embeddings=1000000000, .*embeddings/vars/2 is \[64, 32\]"),
    ("BertMultipleChoice", _bert("intermediate_size", 10**9),
     r"intermediate_size=1000000000, .*intermediate_dense/vars/1 is \[37\]"),
    ("BertPretrainer", _bert("type_vocab_size", 10**9),
     r"type_vocab_size=1000000000, .*embeddings/vars/1 is \[2, 32\]"),
    ("BertPretrainer", _bert("hidden_size", 64),
     r"hidden_size=64, .*embeddings/vars/0 is \[99, 32\]"),
    ("BertEmbedder", _set("config", "dense", 0, "units", 10**9),
     r"dense\[0\] units=1000000000, .*dense_layers/dense/vars/1 is \[8\]"),
    ("BertFeatureTagger", _set("config", "lstm_units", 10**9),
     r"lstm_units=1000000000, .*forward_layer/cell/vars/1 is \[8, 32\]"),
    ("BertFeatureTagger", _set("config", "num_labels", 10**9),
     r"num_labels=1000000000, .*classification_head/vars/0 is \[9, 16\]"),
    ("next_sentence", _bert("vocab_size", 100),
     r"BertNextSentenceClassifier config: vocab_size=100, .* is \[99, 32\]"),
    ("lora", _set("config", "lora", "rank", 10**9),
     r"lora rank=1000000000, .*query/vars/lora_kernel_a is \[32, 4\]"),
    ("lora", _set("config", "lora", "targets", ["query", "intermediate"]),
     r"lora targets \['query', 'intermediate'\], but model.weights.h5 "
     r"holds adapters on \['query', 'intermediate', 'output'\]"),
    ("BertClassifier", _set("config", "lora",
                            {"rank": 4, "targets": ["value"]}),
     "holds no encoder/layers/transformer_block/attention/value/vars/"
     "lora_kernel_a"),
    ("int4", _set("config", "quantized_to", "int8"),
     r"quantized_to='int8', but .*encoder/layers/dense \(the pooler\) holds "
     r"5 weights, where a Dense layer quantized to int8 has 3"),
    ("int4", _set("config", "quantized_to", None),
     r"quantized_to=None, .* holds 5 weights, where a Dense layer of floats "
     "has 2"),
    ("BertClassifier", _set("config", "num_labels", "3"),
     "BertClassifier config: num_labels='3' must be an integer >= 1"),
    ("BertEmbedder", _set("config", "dense", 0, "units", True),
     r"dense\[0\] units=True must be an integer >= 1"),
    ("BertEmbedder", _set("config", "dense", 8),
     r"dense=8; expected a list of Dense modules"),
    ("BertEmbedder", _set("config", "prompts", [1]),
     "BertEmbedder config: cannot convert dictionary update sequence"),
    ("BertFeatureTagger", _set("config", "selected_layers", 2),
     "selected_layers=2; expected a list"),
])
def test_a_tampered_size_is_refused_before_building(saved, tmp_path, name,
                                                    edit, expected):
  assert_refused(tampered(saved, tmp_path, name, edit), expected)


def _weights_edit(edit):
  """edit_files changing model.weights.h5 with edit(h5py.File)."""
  def edit_files(members):
    weights = io.BytesIO(members["model.weights.h5"])
    with h5py.File(weights, "a") as weights_file:
      edit(weights_file)
    members["model.weights.h5"] = weights.getvalue()
  return edit_files


def _large_intermediate_bias(weights_file):
  group = weights_file[
      "encoder/layers/transformer_block/intermediate_dense/vars"]
  del group["1"]
  group["1"] = np.zeros(100_000, np.float32)


def _word_embeddings_linked(weights_file):
  group = weights_file["encoder/embeddings/vars"]
  del group["0"]
  group["0"] = h5py.SoftLink("/encoder/embeddings/vars/2")


def test_sizes_the_weights_file_does_not_hold_are_refused(saved, tmp_path):
  """A file whose pinned weights agree with a large config, its kernels
  missing: the values the config asks for are not in the file."""
  path = tampered(saved, tmp_path, "BertClassifier",
                  _bert("intermediate_size", 100_000),
                  _weights_edit(_large_intermediate_bias))
  assert_refused(path, "its sizes make 13,015,267 weight values, but "
                       r"model.weights.h5 holds [\d,]+ bytes")


def test_a_weight_reached_by_a_link_is_refused(saved, tmp_path):
  path = tampered(saved, tmp_path, "BertClassifier",
                  edit_files=_weights_edit(_word_embeddings_linked))
  assert_refused(path, "model.weights.h5 holds no encoder/embeddings/vars/0")


def test_a_file_without_weights_is_refused(saved, tmp_path):
  path = tampered(saved, tmp_path, "BertClassifier",
                  _bert("vocab_size", 10**9),
                  lambda members: members.pop("model.weights.h5"))
  assert_refused(path, "the file holds no model.weights.h5")


def test_a_folder_and_a_compressed_archive_are_checked(saved, tmp_path):
  """keras.saving.load_model on the unzipped folder, and on an archive
  whose members are compressed (Keras stores them as they are)."""
  folder = tmp_path / "folder"
  compressed = tmp_path / "compressed.keras"
  with zipfile.ZipFile(saved("BertClassifier")[1]) as archive:
    archive.extractall(folder)
    with zipfile.ZipFile(compressed, "w", zipfile.ZIP_DEFLATED) as copy:
      for member in archive.namelist():
        copy.writestr(member, archive.read(member))
  for path in folder, compressed:
    keras.saving.load_model(path)
  config_path = folder / "config.json"
  config = json.loads(config_path.read_text())
  _bert("vocab_size", 10**9)(config)
  config_path.write_text(json.dumps(config))
  rewrite_keras_file(compressed, _bert("num_hidden_layers", 100_000))
  assert_refused(folder, r"folder: BertClassifier config: "
                         r"vocab_size=1000000000, .* is \[99, 32\]")
  assert_refused(compressed, "num_hidden_layers=100000, but")


def test_weights_compressed_over_100_fold_are_refused(saved, tmp_path):
  """A compressed member is read whole: no more than 100 times its bytes
  on disk (10 MB of zeros deflate into some 10 KB)."""
  path = tampered(saved, tmp_path, "BertClassifier", edit_files=_weights_edit(
      lambda weights_file: weights_file.create_dataset(
          "padding", data=np.zeros(2_500_000, np.float32))))
  with zipfile.ZipFile(path) as archive:
    members = {name: archive.read(name) for name in archive.namelist()}
  with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
    for name, data in members.items():
      archive.writestr(name, data)
  assert_refused(path, r"model.weights.h5 is [\d,]+ bytes compressed into "
                       r"[\d,]+; bert_tf reads weights compressed at most "
                       "100-fold")


@pytest.mark.parametrize("field, value, expected", [
    ("vocab_size", 10**9, "its sizes make 32,000,016,909 weight values, "
                          "over 4,294,967,296, the most bert_tf builds "
                          "unchecked by a .keras file's model.weights.h5"),
    ("num_hidden_layers", 100_000, "num_hidden_layers=100000 is over 128"),
])
def test_without_a_file_a_config_is_bounded(tmp_path, field, value,
                                            expected):
  """from_config called directly, a bert_tf model inside another Keras
  model's file, and a legacy .h5 file: no weights of the model's own to
  check against."""
  classifier = bert_tf.BertClassifier(tiny_config(), 3)
  config = classifier.get_config()
  config["config"][field] = value
  assert_refused(config, expected, bert_tf.BertClassifier.from_config)

  ids = keras.Input((16,), dtype="int32", name="input_ids")
  outer = keras.Model(ids, classifier({"input_ids": ids})["logits"])
  outer.save(tmp_path / "outer.keras")

  def edit_inner(outer_config):
    for layer in outer_config["config"]["layers"]:
      if layer["class_name"] == "BertClassifier":
        layer["config"]["config"][field] = value
  rewrite_keras_file(tmp_path / "outer.keras", edit_inner)
  assert_refused(tmp_path / "outer.keras", expected)

  legacy = tmp_path / "classifier.h5"
  classifier.save(legacy)
  with h5py.File(legacy, "a") as legacy_file:
    legacy_config = json.loads(legacy_file.attrs["model_config"])
    legacy_config["config"]["config"][field] = value
    legacy_file.attrs["model_config"] = json.dumps(legacy_config)
  assert_refused(legacy, expected, lambda path: keras.saving.load_model(
      path, custom_objects={"BertClassifier": bert_tf.BertClassifier}))


def test_fewer_layers_inside_another_models_file_are_refused(tmp_path):
  """Where the file's weights are not the model's own, the layer count
  each model saves with its weights refuses a config of fewer layers,
  which Keras would load silently."""
  classifier = bert_tf.BertClassifier(tiny_config(), 3)
  ids = keras.Input((16,), dtype="int32", name="input_ids")
  outer = keras.Model(ids, classifier({"input_ids": ids})["logits"])
  outer.save(tmp_path / "outer.keras")

  def one_layer(outer_config):
    for layer in outer_config["config"]["layers"]:
      if layer["class_name"] == "BertClassifier":
        layer["config"]["config"]["num_hidden_layers"] = 1
  rewrite_keras_file(tmp_path / "outer.keras", one_layer)
  with pytest.raises(ValueError, match="the weights are of 2 transformer "
                                       "layers, but the config's "
                                       "num_hidden_layers is 1"):
    keras.saving.load_model(tmp_path / "outer.keras")
