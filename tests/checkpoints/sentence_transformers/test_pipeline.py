"""sentence-transformers folders, in both layouts, opened by load_pretrained
and checked against sentence-transformers' own outputs for them; what
bert_tf does not reproduce is refused in one line naming file and field."""

import json
import os
import shutil

import numpy as np
import pytest
from safetensors.numpy import save_file

import bert_tf
from bert_tf.checkpoints import sentence_transformers
from tests.support.sentence_transformers_folders import (
    CROSS_ENCODERS, EMBEDDERS, assert_as_sentence_transformers,
    assert_edit_refused_in_one_line, copied, edit_json, expected, folder,
    json_setter, modules_edit, opener)

TANH_DENSE = {"units": 16, "activation": "tanh", "use_bias": True}
IDENTITY_DENSE = {"units": 24, "activation": "linear", "use_bias": False}
# Per folder: pooling, dense, normalize, max length, tokenizer file. The
# classic folder's 16 is sentence_bert_config.json's, over
# tokenizer_config.json's 512; today's 20 is tokenizer_config.json's.
EMBEDDER_SETTINGS = {
    "classic_cls_dense": (["cls"], [TANH_DENSE], True, 16, "vocab.txt"),
    "today_mean": (["mean"], [], True, 20, "tokenizer.json"),
    "today_max": (["max"], [], False, 20, "tokenizer.json"),
    "today_mean_sqrt_len": (["mean_sqrt_len_tokens"], [IDENTITY_DENSE],
                            False, 20, "tokenizer.json"),
}
# Per folder: score activation, max length, labels.
CROSS_ENCODER_SETTINGS = {
    "cross_encoder": ("sigmoid", 20, ["LABEL_0"]),
    "cross_encoder_identity": ("linear", 20, ["LABEL_0"]),
    "cross_encoder_nli": ("linear", 20,
                          ["contradiction", "entailment", "neutral"]),
    "cross_encoder_v4": ("sigmoid", 64, ["LABEL_0"]),
}
CLS, SEP = 7, 8  # in the fixtures' vocabulary


@pytest.fixture(scope="module")
def opened():
  return opener()


@pytest.mark.parametrize("name", EMBEDDERS)
def test_an_embedder_folder_encodes_as_sentence_transformers(opened, name):
  """Every pooling mode, Dense with and without bias, Normalize; the
  texts include "", " " and one longer than the max length."""
  model = opened(name).model
  assert type(model) is bert_tf.BertEmbedder
  texts = expected(name)["texts"]
  assert "" in texts and " " in texts
  assert_as_sentence_transformers(model.encode(texts),
                                  expected(name)["embeddings"])


@pytest.mark.parametrize("name", EMBEDDERS)
def test_an_embedder_folder_s_modules_and_max_length(opened, name):
  pretrained = opened(name)
  model = pretrained.model
  pooling, dense, normalize, max_length, tokenizer = EMBEDDER_SETTINGS[name]
  assert (model.pooling, model.dense, model.normalize) == (
      pooling, dense, normalize)
  assert model.preprocessor.max_seq_length == max_length
  assert os.path.basename(pretrained.vocab_file) == tokenizer
  assert pretrained.load_report.not_in_checkpoint == []
  assert pretrained.load_report.unused == []
  longest = max(len(text.split()) for text in expected(name)["texts"])
  assert longest > max_length  # so the embeddings show the truncation
  if name == "classic_cls_dense":
    assert pretrained.model_max_length == 512


@pytest.mark.parametrize("name", CROSS_ENCODERS)
def test_a_cross_encoder_folder_scores_as_sentence_transformers(opened,
                                                                name):
  model = opened(name).model
  assert type(model) is bert_tf.BertClassifier
  activation, max_length, labels = CROSS_ENCODER_SETTINGS[name]
  assert (model.score_activation, model.labels) == (activation, labels)
  assert model.preprocessor.max_seq_length == max_length
  assert model.preprocessor.tokenization_rules == "transformers"
  values = expected(name)
  assert_as_sentence_transformers_scores(
      model((values["firsts"], values["seconds"])), values)


def test_predict_gives_sentence_transformers_scores(opened):
  """model.predict((firsts, seconds)), as CrossEncoder.predict(pairs)."""
  values = expected("cross_encoder")
  assert_as_sentence_transformers_scores(opened("cross_encoder").model.predict(
      (values["firsts"], values["seconds"]), verbose=0), values)


def assert_as_sentence_transformers_scores(outputs, values):
  """Scores as predict's, logits as predict's with activation_fn
  Identity ([n] for one label)."""
  assert_as_sentence_transformers(outputs["scores"], values["scores"])
  assert_as_sentence_transformers(
      outputs["logits"], np.reshape(values["logits"],
                                    (len(values["firsts"]), -1)))


@pytest.mark.parametrize("name, default", [("cross_encoder", "sigmoid"),
                                           ("cross_encoder_nli", "linear")])
def test_a_cross_encoder_without_activation_fn_takes_the_default(
    tmp_path, name, default):
  """sentence-transformers' default: Sigmoid for one label, else
  Identity."""
  directory = copied(tmp_path, name)
  edit_json(os.path.join(directory, sentence_transformers.MODEL_CONFIG_FILE),
            lambda values: values.pop("activation_fn"))
  model = bert_tf.load_pretrained(directory).model
  assert model.score_activation == default


IDENTITY = "torch.nn.modules.linear.Identity"


@pytest.mark.parametrize("in_model_config, scores", [
    (None, "logits"), ("torch.nn.modules.activation.Sigmoid", "scores")])
def test_config_json_s_activation_counts_where_the_model_config_s_does_not(
    tmp_path, in_model_config, scores):
  """sentence-transformers takes config_sentence_transformers.json's
  activation_fn, else config.json's (a Sigmoid folder here: its
  expected.npz holds the scores of Sigmoid and of Identity, its logits)."""
  directory = copied(tmp_path, "cross_encoder")
  edit_json(os.path.join(directory, sentence_transformers.MODEL_CONFIG_FILE),
            lambda values: values.update(activation_fn=in_model_config))
  edit_json(os.path.join(directory, "config.json"),
            lambda values: values.update(
                sentence_transformers={"activation_fn": IDENTITY}))
  model = bert_tf.load_pretrained(directory).model
  assert model.score_activation == ("linear" if in_model_config is None
                                    else "sigmoid")
  values = expected("cross_encoder")
  assert_as_sentence_transformers(
      model.predict((values["firsts"], values["seconds"]),
                    verbose=0)["scores"], values[scores])


def test_a_hugging_face_folder_without_its_activation_is_a_classifier(
    tmp_path):
  directory = copied(tmp_path, "cross_encoder_v4")
  edit_json(os.path.join(directory, "config.json"),
            lambda values: values.pop("sentence_transformers"))
  pretrained = bert_tf.load_pretrained(directory)
  assert pretrained.pipeline is None
  assert pretrained.model.score_activation is None


def packed(ids, second_from, max_length=20):
  """input_ids, input_mask and segment_ids of ids, padded; segment 1 from
  position second_from on."""
  padding = [0] * (max_length - len(ids))
  segments = [0] * second_from + [1] * (len(ids) - second_from)
  return {"input_ids": ids + padding, "input_mask": [1] * len(ids) + padding,
          "segment_ids": segments + padding}


# Token ids of the fixtures' vocabulary: "the dog"; "one two three" (o
# ##n ##e t ##w ##o t ##h ##r ##e ##e); a..z; k..t.
THE_DOG = [90, 97]
ONE_TWO_THREE = [24, 67, 58, 29, 76, 68, 29, 61, 71, 58, 58]
A_TO_Z, K_TO_T = list(range(10, 36)), list(range(20, 30))
A_TO_J = A_TO_Z[:10]
# The cross-encoder fixture's pairs that transformers packs otherwise than
# the original: ("the dog", "") stays a pair; where both texts are over
# half the budget of 17, the longer (the second on ties) keeps the odd
# token, where the original gives it to the first.
PACKED = {
    4: (packed([CLS, *THE_DOG, SEP, SEP], 4),
        packed([CLS, *THE_DOG, SEP], 4)),
    5: (packed([CLS, *ONE_TWO_THREE[:8], SEP, *A_TO_Z[:9], SEP], 10),
        packed([CLS, *ONE_TWO_THREE[:9], SEP, *A_TO_Z[:8], SEP], 11)),
    8: (packed([CLS, *A_TO_J[:8], SEP, *K_TO_T[:9], SEP], 10),
        packed([CLS, *A_TO_J[:9], SEP, *K_TO_T[:8], SEP], 11)),
}


def test_a_cross_encoder_packs_pairs_as_transformers(opened):
  """A pair with an empty second text, and pairs of two long texts, are
  packed as transformers packs them, which sentence-transformers' scores
  need: the original's packing gives other scores for those pairs
  alone."""
  model = opened("cross_encoder").model
  values = expected("cross_encoder")
  pairs = (values["firsts"], values["seconds"])
  original = bert_tf.BertPreprocessor(
      opened("cross_encoder").vocab_file, True, 20,
      tokenization_rules="original")
  ours, theirs = model.preprocessor(pairs), original(pairs)
  for row, (as_transformers, as_original) in PACKED.items():
    assert {name: value[row].numpy().tolist()
            for name, value in ours.items()} == as_transformers
    assert {name: value[row].numpy().tolist()
            for name, value in theirs.items()} == as_original
  scores = model(theirs)["scores"].numpy()
  differs = np.abs(scores - values["scores"]) > 1e-4
  assert np.flatnonzero(differs).tolist() == sorted(PACKED)


@pytest.mark.parametrize("fields, pooling, include_prompt", [
    ({"pooling_mode_cls_token": False,
      "pooling_mode_weightedmean_tokens": True}, ("weightedmean",), True),
    ({"pooling_mode_mean_tokens": True, "include_prompt": False},
     ("cls", "mean"), False)])
def test_a_classic_pooling_config_s_weightedmean_and_include_prompt(
    tmp_path, fields, pooling, include_prompt):
  directory = copied(tmp_path, "classic_cls_dense")
  json_setter("1_Pooling/config.json", **fields)(directory)
  pipeline = sentence_transformers.read_pipeline(directory)
  assert (pipeline.pooling, pipeline.include_prompt) == (pooling,
                                                         include_prompt)
  assert pipeline.truncate_dim is None


@pytest.mark.parametrize("truncate_dim, kept", [(8, 8), (32, 32), (64, 32)])
def test_a_saved_truncate_dim_is_capped_as_sentence_transformers_caps_it(
    tmp_path, truncate_dim, kept):
  """Over the embeddings' 32 dimensions it keeps them all, as
  sentence-transformers does (what load_pretrained's embedder gets)."""
  directory = copied(tmp_path, "today_weightedmean")
  json_setter("config_sentence_transformers.json", truncate_dim=truncate_dim)(
      directory)
  pipeline = sentence_transformers.read_pipeline(directory)
  assert pipeline.truncate_dim == truncate_dim
  assert pipeline.truncated_dimension(32) == kept


def test_max_length_as_sentence_transformers_chooses_it():
  """sentence_bert_config.json's, else tokenizer_config.json's (unless
  transformers' unset 1e30), capped by the position table."""
  def length(max_seq_length, model_max_length):
    pipeline = sentence_transformers.Pipeline(
        model_type=sentence_transformers.EMBEDDER, transformer_dir="",
        max_seq_length=max_seq_length)
    return sentence_transformers.max_length_of(pipeline, model_max_length,
                                               64)
  assert length(16, 512) == 16
  assert length(None, 20) == 20
  assert length(100, 20) == 64
  assert length(None, 512) == 64
  assert length(None, int(1e30)) == 64
  assert length(None, None) == 64


def _pickle_dense(directory):
  dense = os.path.join(directory, "2_Dense")
  os.rename(os.path.join(dense, "model.safetensors"),
            os.path.join(dense, "pytorch_model.bin"))


def _dense_of_64_inputs(directory):
  """A Dense module whose config and weights agree on 64 inputs, where the
  pooling gives 32."""
  json_setter("2_Dense/config.json", in_features=64)(directory)
  save_file({"linear.weight": np.zeros((24, 64), np.float32)},
            os.path.join(directory, "2_Dense", "model.safetensors"))


def _nested_too_deeply(directory):
  with open(os.path.join(directory, "modules.json"), "w") as writer:
    writer.write("[" * 100000)


def _not_json(directory):
  with open(os.path.join(directory, "modules.json"), "w") as writer:
    writer.write('[{"idx": 0,')


def _pooling_a_fifo(directory):
  pooling = os.path.join(directory, "1_Pooling")
  shutil.rmtree(pooling)
  os.mkfifo(pooling)


def _many_modules(directory):
  """modules.json of 200,001 modules (a Transformer, then Pooling ones)."""
  path = os.path.join(directory, "modules.json")
  with open(path, encoding="utf-8") as reader:
    modules = json.load(reader)
  with open(path, "w", encoding="utf-8") as writer:
    writer.write(json.dumps(modules[:1] + modules[1:2] * 200000))


SOFTPLUS = "torch.nn.modules.activation.Softplus"
# (folder, edit, the file named, what the line says of it)
REFUSALS = {
    "lasttoken": ("today_mean", json_setter("1_Pooling/config.json",
                                            pooling_mode="lasttoken"),
                  "1_Pooling/config.json", "pooling mode 'lasttoken' pools "
                                           "a decoder's last token"),
    "classic lasttoken": (
        "classic_cls_dense", json_setter("1_Pooling/config.json",
                                         pooling_mode_cls_token=False,
                                         pooling_mode_lasttoken=True),
        "1_Pooling/config.json", "pooling mode 'lasttoken'"),
    "truncate_dim 0": ("today_weightedmean", json_setter(
        "config_sentence_transformers.json", truncate_dim=0),
                       "config_sentence_transformers.json",
                       "truncate_dim is 0; expected a whole number of at "
                       "least 1, or null$"),
    "truncate_dim '16'": ("today_weightedmean", json_setter(
        "config_sentence_transformers.json", truncate_dim="16"),
                          "config_sentence_transformers.json",
                          "truncate_dim is '16'; expected"),
    "truncate_dim true": ("today_mean", json_setter(
        "config_sentence_transformers.json", truncate_dim=True),
                          "config_sentence_transformers.json",
                          "truncate_dim is True; expected"),
    "LayerNorm": ("today_mean", modules_edit(lambda modules: modules[2].update(
        type="sentence_transformers.models.LayerNorm")), "modules.json",
                  r"module 2 \(sentence_transformers.models.LayerNorm\) is "
                  "not a module bert_tf reproduces"),
    "Dense before Pooling": (
        "today_mean_sqrt_len", modules_edit(lambda modules: modules.insert(
            1, modules.pop())), "modules.json",
        "modules Transformer, Dense, Pooling; bert_tf reproduces "
        "Transformer, Pooling, any Dense, then an optional Normalize"),
    "Normalize before Dense": (
        "classic_cls_dense", modules_edit(lambda modules: modules.insert(
            2, modules.pop())), "modules.json",
        "modules Transformer, Pooling, Normalize, Dense;"),
    "pickle": ("classic_cls_dense", _pickle_dense, "2_Dense/pytorch_model.bin",
               "PyTorch pickle weights, which bert_tf does not unpickle"),
    "Softplus": ("classic_cls_dense", json_setter("2_Dense/config.json",
                                                  activation_function=SOFTPLUS),
                 "2_Dense/config.json",
                 f"activation_function '{SOFTPLUS}' is not an activation"),
    "default prompt": ("today_mean", json_setter(
        "config_sentence_transformers.json", default_prompt_name="passage"),
                       "config_sentence_transformers.json",
                       "default_prompt_name 'passage' is not one of its "
                       r"prompts \(document, query\)"),
    "not JSON": ("today_mean", _not_json, "modules.json",
                 r"not valid JSON \(line 1"),
    "nested too deeply": ("today_mean", _nested_too_deeply, "modules.json",
                          "JSON nested too deeply to read"),
    "outside": ("today_mean", modules_edit(lambda modules: modules[1].update(
        path="../x")), "modules.json",
                "module 1: '../x' is not a folder inside"),
    "SparseEncoder": ("today_mean", json_setter(
        "config_sentence_transformers.json", model_type="SparseEncoder"),
                      "modules.json",
                      "modules Transformer, Pooling, Normalize; bert_tf "
                      "reproduces a SparseEncoder of a Transformer"),
    "MultiVectorEncoder": ("today_mean", json_setter(
        "config_sentence_transformers.json", model_type="MultiVectorEncoder"),
                           "config_sentence_transformers.json",
                           "model_type 'MultiVectorEncoder' is not one "
                           "bert_tf reproduces"),
    "in_features": ("today_mean_sqrt_len", _dense_of_64_inputs,
                    "2_Dense/config.json",
                    "in_features 64, but the modules before it give 32 "
                    "values"),
    # Checked from the file's header, before a Dense layer that size is
    # built.
    "out_features": ("classic_cls_dense", json_setter("2_Dense/config.json",
                                                      out_features=100000),
                     "2_Dense/model.safetensors",
                     r"tensor linear.weight is shaped \[16, 32\], but its "
                     r"config.json makes it \[100000, 32\]"),
    "cross-encoder activation": (
        "cross_encoder", json_setter("config_sentence_transformers.json",
                                     activation_fn=SOFTPLUS),
        "config_sentence_transformers.json",
        f"activation_fn '{SOFTPLUS}' is not an activation"),
    "lower-cased input, cased tokenizer": (
        "classic_cls_dense", lambda directory: [
            json_setter("tokenizer_config.json",
                        do_lower_case=False)(directory),
            json_setter("sentence_bert_config.json",
                        do_lower_case=True)(directory)],
        "sentence_bert_config.json",
        "do_lower_case lower-cases the text for a tokenizer that keeps "
        "case"),
    "similarity cos_sim": (
        "today_mean", json_setter("config_sentence_transformers.json",
                                  similarity_fn_name="cos_sim"),
        "config_sentence_transformers.json",
        "similarity_fn_name 'cos_sim'; expected one of cosine, dot, "
        "euclidean, manhattan$"),
    "similarity 5": ("today_mean",
                     json_setter("config_sentence_transformers.json",
                                 similarity_fn_name=5),
                     "config_sentence_transformers.json",
                     "similarity_fn_name 5; expected one of"),
    "max_seq_length 1": ("classic_cls_dense", json_setter(
        "sentence_bert_config.json", max_seq_length=1),
                         "sentence_bert_config.json",
                         "max_seq_length is 1; expected an integer of at "
                         "least 3"),
    "max_seq_length 2": ("classic_cls_dense", json_setter(
        "sentence_bert_config.json", max_seq_length=2),
                         "sentence_bert_config.json",
                         "max_seq_length is 2; expected"),
    "model_max_length '24'": ("today_mean", json_setter(
        "tokenizer_config.json", model_max_length="24"),
                              "tokenizer_config.json",
                              "model_max_length is '24'; expected an "
                              "integer of at least 3$"),
    # transformers' tokenizer fails on it, as sentence-transformers does.
    "model_max_length 24.0": ("today_mean", json_setter(
        "tokenizer_config.json", model_max_length=24.0),
                              "tokenizer_config.json",
                              "model_max_length is 24.0; expected"),
    "model_max_length -5": ("cross_encoder", json_setter(
        "tokenizer_config.json", model_max_length=-5),
                            "tokenizer_config.json",
                            "model_max_length is -5; expected"),
    "regression of 3 labels": ("cross_encoder_nli", json_setter(
        "config.json", problem_type="regression"), "config.json",
                               "\"problem_type\" is 'regression' with 3 "
                               "labels; a regression predicts one value"),
    "a label twice": (
        "cross_encoder_nli", json_setter("config.json", id2label={
            "0": "contradiction", "1": "entailment", "2": "entailment"}),
        "config.json", "\"id2label\" names 'entailment' twice; each of the "
                       "head's rows has a label of its own"),
    "include_prompt 'true'": ("today_mean", json_setter("1_Pooling/config.json",
                                                        include_prompt="true"),
                              "1_Pooling/config.json",
                              "include_prompt is 'true'; expected true or "
                              "false$"),
    "Pooling a FIFO": ("today_mean", _pooling_a_fifo, "modules.json",
                       "module 1: '1_Pooling' is a FIFO, not a folder$"),
    "Pooling at the root": (
        "today_mean", modules_edit(lambda modules: modules[1].update(path=".")),
        "modules.json", "module 1: a Pooling module in the folder's root, "
                        "whose config.json is the BERT's"),
    "200,001 modules": ("today_mean", _many_modules, "modules.json",
                        r"modules Transformer, Pooling, Pooling, Pooling, "
                        r"Pooling, Pooling, Pooling, Pooling, \.\.\. "
                        r"\(200001 in all\); bert_tf reproduces"),
    "v4 activation": (
        "cross_encoder_v4", lambda directory: edit_json(
            os.path.join(directory, "config.json"),
            lambda values: values["sentence_transformers"].update(
                activation_fn=SOFTPLUS)), "config.json",
        f"sentence_transformers.activation_fn '{SOFTPLUS}' is not an "
        "activation"),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_what_bert_tf_does_not_reproduce_is_refused_in_one_line(tmp_path,
                                                                case):
  assert_edit_refused_in_one_line(tmp_path, REFUSALS[case])


def test_a_folder_in_the_hugging_face_cache_loads_through_its_links(
    tmp_path):
  """transformers' cache links every file of snapshots/<revision>/, its
  module folders' too, to the model's blobs/: an embedder with Pooling and
  Dense folders opens from there as from the folder."""
  cache = tmp_path / "models--org--embedder"
  snapshot = cache / "snapshots" / "rev1"
  (cache / "blobs").mkdir(parents=True)
  source = folder("classic_cls_dense")
  for index, relative in enumerate(sorted(
      os.path.relpath(os.path.join(root, name), source)
      for root, _, names in os.walk(source) for name in names)):
    shutil.copy(os.path.join(source, relative), cache / "blobs" / str(index))
    link = snapshot / relative
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(os.path.relpath(cache / "blobs" / str(index), link.parent),
               link)
  embedder = bert_tf.load_pretrained(str(snapshot)).model
  assert_as_sentence_transformers(
      embedder.encode(expected("classic_cls_dense")["texts"]),
      expected("classic_cls_dense")["embeddings"])
