import os
import re

import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from bert_tf.checkpoints import model_weights
from bert_tf.checkpoints.original import checkpoint_writer
from bert_tf.checkpoints.original import tf_checkpoints
from tests.support.helpers import (ORIGINAL_TINY, random_inputs, tiny_config,
                                   within_seconds)

ORIGINAL_CKPT = f"{ORIGINAL_TINY}/bert_model.ckpt"


def variable_listing(path):
  reader = tf.train.load_checkpoint(path)
  dtypes = reader.get_variable_to_dtype_map()
  return sorted((name, tuple(shape), dtypes[name].name)
                for name, shape in tf.train.list_variables(path))


@pytest.fixture(scope="module")
def original_config():
  return bert_tf.BertConfig.from_json_file(f"{ORIGINAL_TINY}/bert_config.json")


@pytest.mark.shared
def test_saved_names_shapes_and_dtypes_equal_the_original(tmp_path,
                                                          original_config):
  model = bert_tf.BertPretrainer(original_config)
  path = bert_tf.save_checkpoint(model, str(tmp_path / "model.ckpt-7"),
                                 global_step=7)
  assert variable_listing(path) == variable_listing(ORIGINAL_CKPT)
  assert tf.train.load_checkpoint(path).get_tensor("global_step") == 7


@pytest.mark.shared
def test_load_reports_what_it_loaded(original_config):
  model = bert_tf.BertPretrainer(original_config)
  report = bert_tf.load_checkpoint(model, ORIGINAL_CKPT)
  assert len(report.loaded) == 46
  assert report.not_in_checkpoint == [] and report.unused == []
  assert report.ignored == ["global_step"]
  reader = tf.train.load_checkpoint(ORIGINAL_CKPT)
  np.testing.assert_array_equal(
      model.encoder.embedding_table.numpy(),
      reader.get_tensor("bert/embeddings/word_embeddings"))
  np.testing.assert_array_equal(
      model.next_sentence_head.output_weights.numpy(),
      reader.get_tensor("cls/seq_relationship/output_weights"))


@pytest.mark.shared
def test_load_accepts_a_directory_with_a_checkpoint_file(original_config):
  model = bert_tf.BertEncoder(original_config)
  report = bert_tf.load_checkpoint(model, ORIGINAL_TINY)
  assert report.checkpoint.endswith("bert_model.ckpt")
  assert len(report.loaded) == 39
  assert all(name.startswith("cls/") for name in report.unused)
  assert len(report.unused) == 7


def test_save_load_round_trip_is_exact(tmp_path):
  config = tiny_config(initializer_range=0.5)
  model = bert_tf.BertPretrainer(config)
  path = bert_tf.save_checkpoint(model, str(tmp_path / "out" / "model.ckpt"))
  restored = bert_tf.BertPretrainer(config)
  report = bert_tf.load_checkpoint(restored, path)
  assert len(report.loaded) == len(model.weights)
  for original, copy in zip(model.weights, restored.weights):
    np.testing.assert_array_equal(original.numpy(), copy.numpy())
  inputs = random_inputs(config)
  np.testing.assert_array_equal(model(inputs)["masked_lm_log_probs"],
                                restored(inputs)["masked_lm_log_probs"])
  assert sorted(os.listdir(tmp_path / "out")) == [
      "model.ckpt.data-00000-of-00001", "model.ckpt.index"]


def test_encoder_only_checkpoint_keeps_head_initialisation(tmp_path):
  config = tiny_config()
  encoder = bert_tf.BertEncoder(config)
  path = bert_tf.save_checkpoint(encoder, str(tmp_path / "encoder.ckpt"))
  model = bert_tf.BertPretrainer(config)
  head_before = model.masked_lm_head.transform_dense.kernel.numpy()
  report = bert_tf.load_checkpoint(model, path)
  assert len(report.loaded) == 39
  assert sorted(report.not_in_checkpoint) == sorted(
      name for name in bert_tf.checkpoint_variables(model)
      if name.startswith("cls/"))
  np.testing.assert_array_equal(
      model.masked_lm_head.transform_dense.kernel.numpy(), head_before)
  np.testing.assert_array_equal(model.encoder.embedding_table.numpy(),
                                encoder.embedding_table.numpy())


def test_optimizer_slots_are_ignored(tmp_path):
  config = tiny_config()
  model = bert_tf.BertEncoder(config)
  tensors = {name: tf.convert_to_tensor(variable) for name, variable
             in bert_tf.checkpoint_variables(model).items()}
  tensors["bert/pooler/dense/kernel/adam_m"] = tensors[
      "bert/pooler/dense/kernel"]
  tensors["output_weights"] = tf.zeros([3, 32])
  path = str(tmp_path / "model.ckpt")
  checkpoint_writer.write_checkpoint(path, tensors)
  report = bert_tf.load_checkpoint(bert_tf.BertEncoder(config), path)
  assert report.ignored == ["bert/pooler/dense/kernel/adam_m"]
  assert report.unused == ["output_weights"]


def test_mismatched_config_names_variable_and_shapes_and_changes_nothing(
    tmp_path):
  path = bert_tf.save_checkpoint(bert_tf.BertEncoder(tiny_config()),
                                 str(tmp_path / "model.ckpt"))
  model = bert_tf.BertEncoder(tiny_config(intermediate_size=40))
  before = [weight.numpy() for weight in model.weights]
  with pytest.raises(ValueError, match=(
      "variable bert/encoder/layer_0/intermediate/dense/kernel is shaped "
      "\\[32, 37\\], but the model's config makes it \\[32, 40\\]")):
    bert_tf.load_checkpoint(model, path)
  for value, weight in zip(before, model.weights):
    np.testing.assert_array_equal(value, weight.numpy())


def test_missing_checkpoint_is_a_clear_error(tmp_path):
  with pytest.raises(FileNotFoundError, match="no checkpoint here"):
    bert_tf.load_checkpoint(bert_tf.BertEncoder(tiny_config()),
                            str(tmp_path / "nothing.ckpt"))
  with pytest.raises(FileNotFoundError, match="directory without a checkpoint"):
    bert_tf.load_checkpoint(bert_tf.BertEncoder(tiny_config()), str(tmp_path))


def test_overwrite_leaves_no_temporary_files(tmp_path):
  model = bert_tf.BertEncoder(tiny_config())
  path = str(tmp_path / "model.ckpt")
  bert_tf.save_checkpoint(model, path, global_step=1)
  bert_tf.save_checkpoint(model, path, global_step=2)
  assert sorted(os.listdir(tmp_path)) == [
      "model.ckpt.data-00000-of-00001", "model.ckpt.index"]
  assert tf.train.load_checkpoint(path).get_tensor("global_step") == 2


def test_tf1_saver_restores_our_checkpoint(tmp_path):
  """The original code restores with tf.train.Saver by name: so must ours."""
  config = tiny_config()
  model = bert_tf.BertPretrainer(config)
  path = bert_tf.save_checkpoint(model, str(tmp_path / "model.ckpt"),
                                 global_step=5)
  expected = {name: variable.numpy() for name, variable
              in bert_tf.checkpoint_variables(model).items()}
  with tf.Graph().as_default():
    graph_variables = {
        name: tf.compat.v1.get_variable(name, shape=value.shape)
        for name, value in expected.items()}
    step = tf.compat.v1.train.get_or_create_global_step()
    saver = tf.compat.v1.train.Saver()
    with tf.compat.v1.Session() as session:
      saver.restore(session, path)
      restored = session.run(graph_variables)
      assert session.run(step) == 5
  for name, value in expected.items():
    np.testing.assert_array_equal(restored[name], value)


def test_unknown_model_type_has_no_name_map():
  with pytest.raises(TypeError, match="No checkpoint name map for Sequential"):
    bert_tf.checkpoint_variables(tf.keras.Sequential())


def damaged_copy(source_prefix, prefix, suffix, keep_bytes):
  """The checkpoint at source_prefix copied to prefix, one file cut short."""
  for name in (".index", ".data-00000-of-00001"):
    data = open(f"{source_prefix}{name}", "rb").read()
    if name.startswith(suffix):
      data = data[:keep_bytes(len(data))]
    with open(f"{prefix}{name}", "wb") as writer:
      writer.write(data)
  return prefix


@pytest.mark.parametrize("suffix, keep, message", [
    (".data", lambda size: size // 2, "cannot read variable bert/.*, the "
                                      "checkpoint's data file is truncated"),
    (".data", lambda size: 0, "cannot read variable .*truncated or damaged"),
    (".index", lambda size: size // 2, "cannot read the checkpoint, it is "
                                       "truncated or damaged"),
], ids=["half data", "empty data", "half index"])
def test_a_damaged_checkpoint_is_named_and_changes_nothing(tmp_path, suffix,
                                                           keep, message):
  config = tiny_config()
  saved = bert_tf.save_checkpoint(bert_tf.BertPretrainer(config),
                                  str(tmp_path / "saved.ckpt"))
  path = damaged_copy(saved, str(tmp_path / "model.ckpt"), suffix, keep)
  model = bert_tf.BertPretrainer(config)
  before = [weight.numpy() for weight in model.weights]
  with pytest.raises(model_weights.CorruptCheckpointError,
                     match=f"^{re.escape(path)}: {message}"):
    bert_tf.load_checkpoint(model, path)
  for value, weight in zip(before, model.weights):
    np.testing.assert_array_equal(value, weight.numpy())


def test_a_directory_gives_its_newest_or_its_only_checkpoint(tmp_path):
  model = bert_tf.BertEncoder(tiny_config())
  released = tmp_path / "released[1]"  # matched literally, not a glob
  bert_tf.save_checkpoint(model, str(released / "bert_model.ckpt"))
  assert tf_checkpoints.resolve_checkpoint_path(str(released)) == str(
      released / "bert_model.ckpt")
  for step in (1, 2):
    bert_tf.save_checkpoint(model, str(tmp_path / "run" / f"model.ckpt-{step}"))
  with pytest.raises(FileNotFoundError, match="several checkpoints and no "
                     "'checkpoint' index file.*model.ckpt-1, model.ckpt-2"):
    tf_checkpoints.resolve_checkpoint_path(str(tmp_path / "run"))
  (tmp_path / "run" / "checkpoint").write_text(
      'model_checkpoint_path: "model.ckpt-1"\n')
  assert tf_checkpoints.resolve_checkpoint_path(
      str(tmp_path / "run")) == str(tmp_path / "run" / "model.ckpt-1")



@pytest.mark.parametrize("layers", [1, 3])
def test_a_layer_count_other_than_the_checkpoints_is_refused(tmp_path,
                                                             layers):
  path = bert_tf.save_checkpoint(bert_tf.BertEncoder(tiny_config()),
                                 str(tmp_path / "model.ckpt"))
  with pytest.raises(ValueError, match=(
      f"model.ckpt: holds 2 encoder layers, but the model's config says "
      f"num_hidden_layers {layers}")):
    bert_tf.load_checkpoint(
        bert_tf.BertEncoder(tiny_config(num_hidden_layers=layers)), path)


@pytest.mark.parametrize("value, dtype", [
    (np.array([b"w"] * 32), "string"), (np.arange(32, dtype=np.int32), "int32"),
    (np.ones(32, bool), "bool")])
def test_a_weight_that_is_not_a_float_is_refused_by_name(tmp_path, value,
                                                         dtype):
  reader = tf.train.load_checkpoint(ORIGINAL_CKPT)
  tensors = {name: reader.get_tensor(name)
             for name in reader.get_variable_to_shape_map()}
  tensors["bert/pooler/dense/bias"] = value
  path = str(tmp_path / "model.ckpt")
  checkpoint_writer.write_checkpoint(path, {name: tf.constant(tensor)
                                      for name, tensor in tensors.items()})
  model = bert_tf.BertPretrainer(tiny_config(vocab_size=99))
  before = [weight.numpy() for weight in model.weights]
  with pytest.raises(ValueError, match=(
      f"model.ckpt: variable bert/pooler/dense/bias is {dtype}, not floating "
      f"point")):
    bert_tf.load_checkpoint(model, path)
  for old, weight in zip(before, model.weights):
    np.testing.assert_array_equal(old, weight.numpy())


def test_a_checkpoint_file_that_is_a_fifo_is_refused_unopened(tmp_path):
  path = bert_tf.save_checkpoint(bert_tf.BertEncoder(tiny_config()),
                                 str(tmp_path / "model.ckpt"))
  os.remove(f"{path}.index")
  os.mkfifo(f"{path}.index")
  with pytest.raises(ValueError, match="model.ckpt.index is a FIFO"), \
      within_seconds(10, fifos=[f"{path}.index"]):
    bert_tf.load_checkpoint(bert_tf.BertEncoder(tiny_config()), path)
  os.remove(f"{path}.index")
  os.mkfifo(tmp_path / "checkpoint")
  with pytest.raises(ValueError, match="checkpoint is a FIFO"), \
      within_seconds(10, fifos=[tmp_path / "checkpoint"]):
    bert_tf.load_checkpoint(bert_tf.BertEncoder(tiny_config()), str(tmp_path))
