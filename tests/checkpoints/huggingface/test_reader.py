"""Hugging Face folders as transformers writes them, read by bert_tf and
written back: ../shared/reference/huggingface holds five folders made by
transformers' own save_pretrained with its outputs for them."""

import json
import os
import shutil

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

import bert_tf
from bert_tf.checkpoints import conversion
from bert_tf.checkpoints.huggingface.reader import HuggingFaceFolder
from tests.support.helpers import PROJECT_DIR, SHARED_DIR, within_seconds

HUGGINGFACE_DIR = os.path.join(SHARED_DIR, "reference", "huggingface")
FOLDERS = {
    "bert_for_pretraining": bert_tf.BertPretrainer,
    "bert_for_sequence_classification": bert_tf.BertClassifier,
    "bert_for_question_answering": bert_tf.models.BertSpanLabeler,
    "bert_for_token_classification": bert_tf.models.BertTagger,
    "bert_for_multiple_choice": bert_tf.models.BertMultipleChoice,
}
pytestmark = pytest.mark.shared


def folder(name):
  return os.path.join(HUGGINGFACE_DIR, name)


def encoder_inputs(expected):
  return {"input_ids": expected["input_ids"],
          "input_mask": expected["attention_mask"],
          "segment_ids": expected["token_type_ids"]}


def assert_close(ours, theirs):
  np.testing.assert_allclose(np.asarray(ours), theirs, rtol=0, atol=1e-5)


def head_outputs(name, model, inputs):
  """bert_tf's outputs, named and laid out as transformers' in expected.npz."""
  if name == "bert_for_pretraining":
    batch, length = inputs["input_ids"].shape
    positions = np.tile(np.arange(length), (batch, 1))
    out = model({**inputs, "masked_lm_positions": positions}, training=False)
    return {"prediction_logits": out["masked_lm_logits"],
            "seq_relationship_log_probs": out["next_sentence_log_probs"]}
  out = model(inputs, training=False)
  if name == "bert_for_question_answering":
    return {"start_logits": out["start_logits"],
            "end_logits": out["end_logits"]}
  return {"logits": out["logits"]}


@pytest.mark.parametrize("name", FOLDERS)
def test_every_head_gives_transformers_outputs(name):
  pretrained = bert_tf.load_pretrained(folder(name))
  assert type(pretrained.model) is FOLDERS[name]
  assert pretrained.load_report.not_in_checkpoint in (
      [], ["bert/pooler/dense/kernel", "bert/pooler/dense/bias"])
  assert pretrained.load_report.unused == []
  assert pretrained.do_lower_case is True
  expected = np.load(f"{folder(name)}/expected.npz")
  inputs = encoder_inputs(expected)
  flat = {key: value.reshape(-1, value.shape[-1])
          for key, value in inputs.items()}
  encoded = pretrained.model.encoder(flat, training=False)
  assert_close(encoded["embedding_output"], expected["hidden_states_0"])
  for index, layer in enumerate(encoded["all_encoder_layers"]):
    assert_close(layer, expected[f"hidden_states_{index + 1}"])
  if "pooler_output" in expected:
    assert_close(encoded["pooled_output"], expected["pooler_output"])
  for key, value in head_outputs(name, pretrained.model, inputs).items():
    if key == "seq_relationship_log_probs":
      logits = expected["seq_relationship_logits"]
      theirs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    else:
      theirs = expected[key].reshape(np.shape(value))
    assert_close(value, theirs)


def tensors_by_label(directory):
  """The folder's tensors, a classifier's rows keyed by label name, so
  heads that name their labels compare whatever their order."""
  tensors = load_file(f"{directory}/model.safetensors")
  config = json.load(open(f"{directory}/config.json"))
  if "id2label" in config and "classifier.weight" in tensors:
    for key in ("classifier.weight", "classifier.bias"):
      rows = tensors.pop(key)
      for index, label in config["id2label"].items():
        tensors[f"{key}[{label}]"] = rows[int(index)]
  return tensors


@pytest.mark.parametrize("name", FOLDERS)
def test_every_head_round_trips_through_the_original_format_bit_for_bit(
    tmp_path, name):
  original, back = tmp_path / "original", tmp_path / "back"
  conversion.convert(folder(name), str(original), conversion.ORIGINAL)
  assert sorted(os.listdir(original)) == [
      "bert_config.json", "bert_model.ckpt.data-00000-of-00001",
      "bert_model.ckpt.index", "vocab.txt"]
  conversion.convert(str(original), str(back), conversion.HUGGINGFACE)
  ours, theirs = tensors_by_label(back), tensors_by_label(folder(name))
  assert sorted(ours) == sorted(theirs)
  for key, value in theirs.items():
    assert ours[key].dtype == value.dtype
    np.testing.assert_array_equal(ours[key], value, err_msg=key)
  ours_config = json.load(open(back / "config.json"))
  theirs_config = json.load(open(f"{folder(name)}/config.json"))
  for key, value in ours_config.items():
    assert theirs_config.get(key, value) == value, key
  assert json.load(open(back / "tokenizer_config.json"))["do_lower_case"]
  assert (back / "vocab.txt").read_bytes() == open(
      f"{folder(name)}/vocab.txt", "rb").read()


def copy_folder(tmp_path, name="bert_for_pretraining"):
  target = tmp_path / name
  shutil.copytree(folder(name), target)
  return target


def rewrite_weights(directory, change):
  """Rewrites model.safetensors with change(tensors) applied."""
  tensors = load_file(f"{directory}/model.safetensors")
  change(tensors)
  save_file(tensors, f"{directory}/model.safetensors",
            metadata={"format": "pt"})


def rewrite_config(directory, change):
  values = json.load(open(f"{directory}/config.json"))
  change(values)
  (directory / "config.json").write_text(json.dumps(values))


def read_all(directory):
  reader = HuggingFaceFolder(str(directory))
  return {name: reader.get_tensor(name)
          for name in reader.get_variable_to_shape_map()}


def _tie_decoder(tensors):
  tensors["cls.predictions.decoder.weight"] = \
      tensors["bert.embeddings.word_embeddings.weight"]
  tensors["cls.predictions.decoder.bias"] = tensors["cls.predictions.bias"]


def _only_decoder_bias(tensors):
  tensors["cls.predictions.decoder.bias"] = tensors.pop("cls.predictions.bias")


def _old_layer_norm_names(tensors):
  for key in [key for key in tensors if "LayerNorm" in key]:
    tensors[key.replace(".weight", ".gamma").replace(".bias", ".beta")] = \
        tensors.pop(key)


def _position_ids(tensors):
  tensors["bert.embeddings.position_ids"] = np.arange(64)[None]


def _no_architectures(values):
  del values["architectures"]


@pytest.mark.parametrize("change_weights, change_config", [
    (_tie_decoder, None),
    (_only_decoder_bias, None),
    (_old_layer_norm_names, None),
    (_position_ids, None),
    (None, _no_architectures),
], ids=["decoder_stored", "decoder_bias_only", "gamma_beta", "position_ids",
        "no_architectures"])
def test_folder_variants_read_the_same_weights(tmp_path, change_weights,
                                               change_config):
  variant = copy_folder(tmp_path)
  if change_weights:
    rewrite_weights(variant, change_weights)
  if change_config:
    rewrite_config(variant, change_config)
  expected = read_all(folder("bert_for_pretraining"))
  ours = read_all(variant)
  assert sorted(ours) == sorted(expected)
  for name, value in expected.items():
    np.testing.assert_array_equal(ours[name], value, err_msg=name)


SECOND_SHARD = "model-00002-of-00002.safetensors"


def sharded_folder(tmp_path, change_map=None):
  """The pretraining folder in two shards, as transformers shards, with
  change_map(weight_map, folder) applied to its index."""
  variant = copy_folder(tmp_path)
  tensors = load_file(f"{variant}/model.safetensors")
  (variant / "model.safetensors").unlink()
  names = sorted(tensors)
  weight_map = {}
  for index, part in enumerate((names[:20], names[20:])):
    file_name = f"model-0000{index + 1}-of-00002.safetensors"
    save_file({name: tensors[name] for name in part},
              f"{variant}/{file_name}", metadata={"format": "pt"})
    weight_map.update({name: file_name for name in part})
  if change_map:
    change_map(weight_map, variant)
  (variant / "model.safetensors.index.json").write_text(json.dumps(
      {"metadata": {"total_size": 0}, "weight_map": weight_map}))
  return variant


def test_a_sharded_folder_reads_as_one(tmp_path):
  expected = read_all(folder("bert_for_pretraining"))
  ours = read_all(sharded_folder(tmp_path))
  for name, value in expected.items():
    np.testing.assert_array_equal(ours[name], value, err_msg=name)


def _second_shard_moved_out(variant):
  """The second shard outside the folder, the index naming it anyhow: by
  "..", by an absolute path, through a symlink."""
  outside = variant.parent / "evil"
  outside.mkdir(exist_ok=True)
  shutil.copy(variant / SECOND_SHARD, outside / "x.safetensors")
  return outside / "x.safetensors"


@pytest.mark.parametrize("how", ["dotdot", "absolute", "symlink"])
def test_no_shard_is_read_from_outside_the_folder(tmp_path, how):
  def change_map(weight_map, variant):
    outside = _second_shard_moved_out(variant)
    if how == "symlink":
      (variant / SECOND_SHARD).unlink()
      os.symlink(outside, variant / SECOND_SHARD)
      return
    entry = "../evil/x.safetensors" if how == "dotdot" else str(outside)
    for name, file_name in weight_map.items():
      if file_name == SECOND_SHARD:
        weight_map[name] = entry

  variant = sharded_folder(tmp_path, change_map)
  with pytest.raises(ValueError, match=(
      "model.safetensors.index.json: '.*' (is not a file inside|resolves to "
      ".*/evil/x.safetensors, outside) .*bert_for_pretraining")):
    bert_tf.load_pretrained(str(variant))
  with pytest.raises(ValueError, match="outside|not a file inside"):
    conversion.convert(str(variant), str(tmp_path / "out"),
                       conversion.ORIGINAL)
  assert not (tmp_path / "out").exists()


def test_a_hugging_face_cache_snapshot_loads_through_its_links(tmp_path):
  """transformers' cache links every file of snapshots/<revision>/ to
  ../../blobs/<hash>: a cache folder opens as the folder does."""
  cache = tmp_path / "models--org--tiny-bert"
  snapshot = cache / "snapshots" / "0123abc"
  snapshot.mkdir(parents=True)
  (cache / "blobs").mkdir()
  for index, name in enumerate(sorted(os.listdir(
      folder("bert_for_sequence_classification")))):
    shutil.copy(f"{folder('bert_for_sequence_classification')}/{name}",
                cache / "blobs" / f"blob{index}")
    os.symlink(f"../../blobs/blob{index}", snapshot / name)
  pretrained = bert_tf.load_pretrained(str(snapshot))
  assert pretrained.labels == ["LABEL_0", "LABEL_1", "LABEL_2"]
  assert len(pretrained.load_report.loaded) == 41


def _entry(value):
  def change_map(weight_map, _):
    weight_map["bert.embeddings.LayerNorm.bias"] = value
  return change_map


def _entry_made(make, value):
  def change_map(weight_map, variant):
    make(variant)
    weight_map["bert.embeddings.LayerNorm.bias"] = value
  return change_map


@pytest.mark.parametrize("change_map, message", [
    (_entry(5), r"index.json: weight_map\['bert.embeddings.LayerNorm.bias'\] "
                r"is 5, not the name of a shard file"),
    (_entry(None), r"index.json: weight_map\['bert.embeddings.LayerNorm.bias'"
                   r"\] is None, not the name"),
    (_entry_made(lambda variant: (variant / "shards").mkdir(), "shards"),
     r"index.json: 'shards' is a directory, not a regular file"),
    (_entry_made(lambda variant: os.symlink("/dev/zero",
                                            variant / "zero.safetensors"),
                 "zero.safetensors"),
     r"index.json: 'zero.safetensors' is a character device, not a regular "
     r"file"),
    (_entry_made(lambda variant: os.mkfifo(variant / "fifo.safetensors"),
                 "fifo.safetensors"),
     r"index.json: 'fifo.safetensors' is a FIFO, not a regular file"),
    (_entry(SECOND_SHARD), rf"{SECOND_SHARD}: no tensor bert.embeddings."
                           rf"LayerNorm.bias, which model.safetensors."
                           rf"index.json places in it"),
    (_entry("model-3.safetensors"), r"index.json: weight_map\[.*\] names "
                                    r"'model-3.safetensors', which .* does not "
                                    r"have"),
], ids=["number", "null", "directory", "device", "fifo", "tensor_elsewhere",
        "no_such_shard"])
def test_a_bad_index_entry_is_one_line(tmp_path, change_map, message):
  variant = sharded_folder(tmp_path, change_map)
  with pytest.raises((ValueError, FileNotFoundError), match=message) as \
      raised, within_seconds(10, fifos=list(variant.glob("fifo.*"))):
    bert_tf.load_pretrained(str(variant))
  assert "\n" not in str(raised.value)


@pytest.mark.parametrize("name", ["config.json", "model.safetensors",
                                  "tokenizer_config.json", "vocab.txt"])
def test_a_fifo_in_a_folder_is_refused_not_opened(tmp_path, name):
  variant = copy_folder(tmp_path)
  (variant / name).unlink()
  os.mkfifo(variant / name)
  with pytest.raises(ValueError, match=(
      f"{variant}/{name} is a FIFO, not a regular file")), \
      within_seconds(10, fifos=[variant / name]):
    bert_tf.load_pretrained(str(variant))


def test_a_stored_tensor_the_model_does_not_use_is_reported(tmp_path):
  variant = copy_folder(tmp_path, "bert_for_sequence_classification")
  rewrite_weights(variant, lambda tensors: tensors.update(
      {"bert.encoder.layer.0.attention.self.rotary.weight":
       np.ones(4, np.float32), "extra.head.bias": np.ones(2, np.float32)}))
  report = bert_tf.load_pretrained(str(variant)).load_report
  assert report.unused == ["bert.encoder.layer.0.attention.self.rotary.weight",
                           "extra.head.bias"]
  assert len(report.loaded) == 41


def test_an_encoder_saved_alone_without_the_bert_prefix(tmp_path):
  """BertModel.save_pretrained names its tensors without "bert.", and older
  exports say LayerNorm.gamma/beta."""
  variant = copy_folder(tmp_path)

  def encoder_only(tensors):
    for key in list(tensors):
      value = tensors.pop(key)
      if key.startswith("bert."):
        tensors[key.removeprefix("bert.").replace(
            "LayerNorm.weight", "LayerNorm.gamma")] = value

  rewrite_weights(variant, encoder_only)
  rewrite_config(variant, lambda values: values.update(
      architectures=["BertModel"]))
  pretrained = bert_tf.load_pretrained(str(variant))
  assert type(pretrained.model) is bert_tf.BertEncoder
  assert pretrained.load_report.not_in_checkpoint == []
  expected = np.load(f"{folder('bert_for_pretraining')}/expected.npz")
  out = pretrained.model(encoder_inputs(expected), training=False)
  assert_close(out["sequence_output"], expected["hidden_states_2"])
  out_dir = tmp_path / "out"
  conversion.convert(str(variant), str(out_dir), conversion.HUGGINGFACE)
  written = load_file(f"{out_dir}/model.safetensors")
  assert "embeddings.word_embeddings.weight" in written  # as transformers
  assert not any(key.startswith("bert.") for key in written)


def pickle_only(tmp_path):
  variant = copy_folder(tmp_path)
  (variant / "model.safetensors").unlink()
  # A pickle that would leave a file behind if anything unpickled it.
  marker = tmp_path / "unpickled"
  (variant / "pytorch_model.bin").write_bytes(
      b"cos\nsystem\n(S'touch " + str(marker).encode() + b"'\ntR.")
  return variant


@pytest.mark.parametrize("break_folder, message", [
    (lambda tmp_path: rewrite_weights(copy_folder(tmp_path), lambda tensors:
                                      tensors.pop("cls.seq_relationship.bias")),
     r"model.safetensors: no tensor cls.seq_relationship.bias, which "
     r"BertForPreTraining has"),
    (lambda tmp_path: rewrite_config(copy_folder(tmp_path), lambda values:
                                     values.update(intermediate_size=40)),
     r"model.safetensors: tensor bert.encoder.layer.0.intermediate.dense."
     r"weight is shaped \[37, 32\], but config.json makes it \[40, 32\]"),
    (pickle_only, r"pytorch_model.bin: PyTorch pickle weights, which bert_tf "
                  r"does not unpickle .* get model.safetensors"),
    (lambda tmp_path: rewrite_config(copy_folder(tmp_path), lambda values:
                                     values.update(model_type="roberta")),
     r"config.json: model_type 'roberta' is not a BERT"),
    (lambda tmp_path: rewrite_weights(copy_folder(tmp_path), lambda tensors:
                                      tensors.update({
                                          "cls.predictions.decoder.weight":
                                          np.zeros((144, 32), np.float32)})),
     r"cls.predictions.decoder.weight differs from the word embeddings"),
    *[(lambda tmp_path, layers=layers: rewrite_config(
        copy_folder(tmp_path), lambda values: values.update(
            num_hidden_layers=layers)),
       r"model.safetensors: holds 2 encoder layers, but .*config.json says "
       f"num_hidden_layers {layers}") for layers in (1, 3, 100_000)],
    *[(lambda tmp_path, dtype=dtype: rewrite_weights(
        copy_folder(tmp_path), lambda tensors: tensors.update({
            key: tensors[key].astype(dtype) for key in (
                "bert.embeddings.word_embeddings.weight",
                "cls.predictions.decoder.weight") if key in tensors})),
       "model.safetensors: tensor bert.embeddings.word_embeddings.weight is "
       f"{name}, not floating point") for dtype, name in ((np.int64, "I64"),
                                                          (bool, "BOOL"))],
    *[(lambda tmp_path, field=field, value=value: rewrite_config(
        copy_folder(tmp_path, "bert_for_sequence_classification"),
        lambda values: values.update({field: value})), message)
      for field, value, message in (
          ("hidden_act", ["gelu"], r"config.json: hidden_act \['gelu'\] has "
                                   r"no bert_tf equivalent"),
          ("architectures", {"a": 1}, r"config.json: \"architectures\" is "
                                      r"\{'a': 1\}; expected a list"),
          ("architectures", [["BertModel"]], r"config.json: \"architectures\""
                                             r" is \[\['BertModel'\]\]"),
          ("architectures", "B", r"config.json: \"architectures\" is 'B'"),
          ("id2label", {"0": "a", "1": 2, "2": "c"},
           r"config.json: \"id2label\" entry '1': 2 is not a label id"),
          ("id2label", {"0": "a", "one": "b", "2": "c"},
           r"config.json: \"id2label\" entry 'one': 'b' is not a label id"),
          ("id2label", {"0": "a", "2": "c", "3": "d"},
           r"config.json: \"id2label\" has ids \[0, 2, 3\]; expected 0 to "
           r"2")
      )],
    (lambda tmp_path: rewrite_config(
        copy_folder(tmp_path, "bert_for_sequence_classification"),
        lambda values: [values.pop(key) for key in ("id2label", "label2id")]
        and values.update(num_labels="3")),
     r"config.json: \"num_labels\" is '3'; expected a whole number"),
    (lambda tmp_path: (copy_folder(tmp_path) / "config.json").write_bytes(
        b'{"model_type": "bert",\n"vocab_size": 144, "x": "\xff"}'),
     r"config.json: line 2 is not UTF-8 text"),
    (lambda tmp_path: (copy_folder(tmp_path) / "vocab.txt").write_text(
        "[PAD]\n[CLS]\n[SEP]\nthe\n"),
     r"vocab.txt: no \[UNK\] token; a BERT vocabulary has \[UNK\], \[CLS\], "
     r"\[SEP\]"),
    (lambda tmp_path: (copy_folder(tmp_path) / "vocab.txt").write_text(""),
     r"vocab.txt: no tokens"),
], ids=["missing_tensor", "shape", "pickle", "model_type", "untied_decoder",
        "1_layer_over_2", "3_layers_over_2", "100000_layers",
        "int64_weights", "bool_weights", "hidden_act_list",
        "architectures_object", "architectures_nested", "architectures_string",
        "label_not_a_string", "label_id_not_a_number", "label_ids_with_a_gap",
        "num_labels_string", "config_not_utf8", "vocab_without_unk",
        "vocab_empty"])
def test_a_bad_folder_is_refused_in_one_line_naming_it(tmp_path, break_folder,
                                                      message):
  break_folder(tmp_path)
  (variant,) = [path for path in tmp_path.iterdir() if path.is_dir()]
  with pytest.raises(ValueError, match=message) as raised, within_seconds(10):
    bert_tf.load_pretrained(str(variant))
  assert str(variant) in str(raised.value)
  assert "\n" not in str(raised.value)
  with pytest.raises(ValueError, match=message), within_seconds(10):
    conversion.convert(str(variant), str(tmp_path / "out"),
                       conversion.ORIGINAL)
  assert not (tmp_path / "out").exists()
  assert not (tmp_path / "unpickled").exists()


MASKED_LM = os.path.join(PROJECT_DIR, "tests", "fixtures", "huggingface",
                         "bert_for_masked_lm")


def masked_lm_folder(tmp_path):
  """transformers' own BertForMaskedLM folder (tests/fixtures/huggingface,
  no pooler, no next-sentence head), with the shared folder's vocabulary."""
  target = tmp_path / "bert_for_masked_lm"
  shutil.copytree(MASKED_LM, target)
  for name in ("vocab.txt", "tokenizer_config.json"):
    shutil.copy(f"{folder('bert_for_pretraining')}/{name}", target)
  return target


def test_a_masked_lm_folder_gives_transformers_outputs_and_round_trips(
    tmp_path):
  directory = masked_lm_folder(tmp_path)
  pretrained = bert_tf.load_pretrained(str(directory))
  assert type(pretrained.model) is bert_tf.BertPretrainer
  assert pretrained.load_report.not_in_checkpoint == [
      "bert/pooler/dense/kernel", "bert/pooler/dense/bias",
      "cls/seq_relationship/output_weights",
      "cls/seq_relationship/output_bias"]
  expected = np.load(directory / "expected.npz")
  outputs = head_outputs("bert_for_pretraining", pretrained.model,
                         encoder_inputs(expected))
  assert_close(outputs["prediction_logits"], expected["prediction_logits"])
  conversion.convert(str(directory), str(tmp_path / "original"),
                     conversion.ORIGINAL)
  conversion.convert(str(tmp_path / "original"), str(tmp_path / "back"),
                     conversion.HUGGINGFACE)
  assert json.load(open(tmp_path / "back" / "config.json"))[
      "architectures"] == ["BertForMaskedLM"]
  ours, theirs = (load_file(f"{path}/model.safetensors")
                  for path in (tmp_path / "back", directory))
  assert sorted(ours) == sorted(theirs)
  for key, value in theirs.items():
    np.testing.assert_array_equal(ours[key], value, err_msg=key)


def test_a_masked_lm_folder_without_architectures_is_read_as_one(tmp_path):
  directory = masked_lm_folder(tmp_path)
  rewrite_config(directory, _no_architectures)
  pretrained = bert_tf.load_pretrained(str(directory))
  assert len(pretrained.load_report.loaded) == 42


def test_a_hub_masked_lm_folder_storing_every_pretraining_weight(tmp_path):
  """bert-base-uncased names BertForMaskedLM and stores the pooler and the
  next-sentence head too: all are read, and convert as BertForPreTraining."""
  variant = copy_folder(tmp_path)
  rewrite_config(variant, lambda values: values.update(
      architectures=["BertForMaskedLM"]))
  pretrained = bert_tf.load_pretrained(str(variant))
  assert pretrained.load_report.not_in_checkpoint == []
  assert len(pretrained.load_report.loaded) == 46
  conversion.convert(str(variant), str(tmp_path / "hf"),
                     conversion.HUGGINGFACE)
  assert json.load(open(tmp_path / "hf" / "config.json"))[
      "architectures"] == ["BertForPreTraining"]


def test_the_encoder_alone_is_taken_out_of_any_head(tmp_path):
  conversion.convert(folder("bert_for_sequence_classification"),
                     str(tmp_path / "encoder"), conversion.HUGGINGFACE,
                     architecture_name="BertModel")
  written = load_file(f"{tmp_path}/encoder/model.safetensors")
  assert "pooler.dense.weight" in written
  assert not any(key.startswith(("bert.", "classifier.")) for key in written)
  assert json.load(open(tmp_path / "encoder" / "config.json"))[
      "architectures"] == ["BertModel"]


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
def test_half_precision_weights_are_read_as_float32(tmp_path, dtype):
  import ml_dtypes  # pylint: disable=import-outside-toplevel
  dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype
  variant = copy_folder(tmp_path)
  rewrite_weights(variant, lambda tensors: tensors.update(
      {key: value.astype(dtype) for key, value in tensors.items()}))
  expected = read_all(folder("bert_for_pretraining"))
  ours = read_all(variant)
  for name, value in expected.items():
    assert ours[name].dtype == np.float32
    np.testing.assert_array_equal(
        ours[name], value.astype(dtype).astype(np.float32), err_msg=name)
