"""SparseEncoder folders' modules and settings (read_pipeline), in
sentence-transformers 6's, 5's and the Hub's layouts; what bert_tf does not
reproduce, or a tampered value, is refused in one line naming the file and
field or module."""

import os
import re

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

import bert_tf
from bert_tf.checkpoints import sentence_transformers
from tests.support.sentence_transformers_folders import (
    SPARSE_ENCODERS, assert_edit_refused_in_one_line, copied, edit_json,
    folder, json_setter, modules_edit)

SPLADE_POOLING = ("sentence_transformers.sparse_encoder.modules"
                  ".splade_pooling.SpladePooling")


@pytest.mark.parametrize("name, splade, max_active_dims, default_prompt", [
    ("max_relu_prompts", ("max", "relu"), None, None),
    ("sum_log1p_relu", ("sum", "log1p_relu"), None, None),
    ("max_active_dims", ("max", "relu"), 6, "query"),
    ("classic", ("max", "relu"), None, None)])
def test_a_sparse_encoder_folders_settings(name, splade, max_active_dims,
                                           default_prompt):
  pipeline = sentence_transformers.read_pipeline(folder(name))
  assert pipeline.model_type == sentence_transformers.SPARSE_ENCODER
  assert (pipeline.splade.pooling_strategy,
          pipeline.splade.activation) == splade
  assert pipeline.max_active_dims == max_active_dims
  assert pipeline.default_prompt_name == default_prompt
  assert pipeline.transformer_dir == folder(name)


def test_splade_modules_make_a_sparse_encoder_without_a_model_type(tmp_path):
  """As the Hub's folders of sentence-transformers before 5 name none; a
  default prompt may name the "query" and "document" prompts every
  SparseEncoder has."""
  directory = copied(tmp_path, "classic")
  edit_json(os.path.join(directory, "config_sentence_transformers.json"),
            lambda values: [values.pop("model_type"), values.update(
                prompts=None, default_prompt_name="query")])
  pipeline = sentence_transformers.read_pipeline(directory)
  assert pipeline.model_type == sentence_transformers.SPARSE_ENCODER
  assert (pipeline.prompts, pipeline.default_prompt_name) == ({}, "query")


def _without_masked_lm_head(directory):
  """A BertModel's weights and config.json (no cls/predictions)."""
  path = os.path.join(directory, "model.safetensors")
  save_file({name: value for name, value in load_file(path).items()
             if not name.startswith("cls.")}, path)
  json_setter("config.json", architectures=["BertModel"])(directory)


# (folder, edit, the file named, what the line says of it)
REFUSALS = {
    "pooling mean": ("max_relu_prompts", json_setter(
        "1_SpladePooling/config.json", pooling_strategy="mean"),
                     "1_SpladePooling/config.json",
                     "pooling_strategy 'mean' is not one bert_tf reproduces "
                     r"\(max, sum\)$"),
    "activation gelu": ("sum_log1p_relu", json_setter(
        "1_SpladePooling/config.json", activation_function="gelu"),
                        "1_SpladePooling/config.json",
                        "activation_function 'gelu' is not one bert_tf "
                        r"reproduces \(relu, log1p_relu\)$"),
    "activation a list": ("max_relu_prompts", json_setter(
        "1_SpladePooling/config.json", activation_function=["relu"]),
                          "1_SpladePooling/config.json",
                          r"activation_function \['relu'\] is not one"),
    "embedding_dimension '144'": (
        "classic", json_setter("1_SpladePooling/config.json",
                               word_embedding_dimension="144"),
        "1_SpladePooling/config.json",
        "word_embedding_dimension is '144'; expected an integer or null$"),
    "chunk_size 1.5": ("max_relu_prompts", json_setter(
        "1_SpladePooling/config.json", chunk_size=1.5),
                       "1_SpladePooling/config.json",
                       "chunk_size is 1.5; expected"),
    "max_active_dims 0": ("max_active_dims", json_setter(
        "config_sentence_transformers.json", max_active_dims=0),
                          "config_sentence_transformers.json",
                          "max_active_dims is 0; expected a whole number of "
                          "at least 1, or null$"),
    "max_active_dims -1": ("max_active_dims", json_setter(
        "config_sentence_transformers.json", max_active_dims=-1),
                           "config_sentence_transformers.json",
                           "max_active_dims is -1; expected"),
    "max_active_dims true": ("max_active_dims", json_setter(
        "config_sentence_transformers.json", max_active_dims=True),
                             "config_sentence_transformers.json",
                             "max_active_dims is True; expected"),
    "max_active_dims '6'": ("max_active_dims", json_setter(
        "config_sentence_transformers.json", max_active_dims="6"),
                            "config_sentence_transformers.json",
                            "max_active_dims is '6'; expected"),
    "feature-extraction": ("max_relu_prompts", json_setter(
        "sentence_bert_config.json", transformer_task="feature-extraction"),
                           "sentence_bert_config.json",
                           "transformer_task 'feature-extraction'; a "
                           "SparseEncoder's Transformer is 'fill-mask'"),
    "no transformer_task": (
        "max_relu_prompts", lambda directory: edit_json(
            os.path.join(directory, "sentence_bert_config.json"),
            lambda values: values.pop("transformer_task")),
        "sentence_bert_config.json", "transformer_task None; a "
                                     "SparseEncoder's Transformer is"),
    "MLMTransformer of another task": ("classic", json_setter(
        "sentence_bert_config.json", transformer_task="text-generation"),
                                       "sentence_bert_config.json",
                                       "transformer_task 'text-generation'; "
                                       "a SparseEncoder's MLMTransformer"),
    "SparseAutoEncoder": (
        "max_relu_prompts", modules_edit(lambda modules: modules.append({
            "idx": 2, "name": "2", "path": "2_SparseAutoEncoder",
            "type": "sentence_transformers.sparse_encoder.modules"
                    ".sparse_auto_encoder.SparseAutoEncoder"})),
        "modules.json", r"module 2 \(sentence_transformers.sparse_encoder"
                        r".modules.sparse_auto_encoder.SparseAutoEncoder\) "
                        "is not a module bert_tf reproduces"),
    "SpladePooling twice": (
        "max_relu_prompts", modules_edit(lambda modules: modules.append(
            modules[1])), "modules.json",
        "modules Transformer, SpladePooling, SpladePooling; bert_tf "
        "reproduces a SparseEncoder of a Transformer"),
    "SpladePooling first": (
        "max_relu_prompts", modules_edit(lambda modules: modules.reverse()),
        "modules.json", "modules SpladePooling, Transformer;"),
    "SpladePooling in an embedder": (
        "max_relu_prompts", json_setter("config_sentence_transformers.json",
                                        model_type="SentenceTransformer"),
        "modules.json", "modules Transformer, SpladePooling of a "
                        "SentenceTransformer; bert_tf reproduces "
                        "MLMTransformer, SpladePooling, Router in a "
                        "SparseEncoder$"),
    "SpladePooling at the root": (
        "max_relu_prompts", modules_edit(lambda modules: modules[1].update(
            path="")), "modules.json",
        "module 1: a SpladePooling module in the folder's root"),
    "no masked-LM head": ("max_relu_prompts", _without_masked_lm_head, "",
                          "a SparseEncoder of BertModel; bert_tf reproduces "
                          "those of a masked-LM head"),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_what_bert_tf_does_not_reproduce_is_refused_in_one_line(tmp_path,
                                                                case):
  assert_edit_refused_in_one_line(tmp_path, REFUSALS[case])


def test_a_missing_splade_pooling_config_is_named(tmp_path):
  directory = copied(tmp_path, "max_relu_prompts")
  os.remove(os.path.join(directory, "1_SpladePooling", "config.json"))
  with pytest.raises(FileNotFoundError, match=re.escape(os.path.join(
      directory, "1_SpladePooling", "config.json")) + ": missing"):
    sentence_transformers.read_pipeline(directory)


def test_every_fixture_is_a_sparse_encoder():
  assert all(sentence_transformers.read_pipeline(folder(name)).splade
             for name in SPARSE_ENCODERS)


ROUTER_CONFIG = "router_config.json"
STATIC = "query_0_SparseStaticEmbedding"


def _router(edit):
  return lambda directory: edit_json(os.path.join(directory, ROUTER_CONFIG),
                                     edit)


def _static_weights(weights):
  return lambda directory: save_file(weights, os.path.join(
      directory, STATIC, "model.safetensors"))


def test_a_router_folders_routes():
  pipeline = sentence_transformers.read_pipeline(folder("router"))
  assert pipeline.model_type == sentence_transformers.SPARSE_ENCODER
  assert pipeline.default_route == "document"
  assert pipeline.transformer_dir == os.path.join(folder("router"),
                                                  "document_0_Transformer")
  assert pipeline.static_query.folder == os.path.join(folder("router"),
                                                      STATIC)
  assert pipeline.static_query.size == 144
  assert (pipeline.splade.pooling_strategy,
          pipeline.splade.activation) == ("max", "relu")


@pytest.mark.parametrize("parameters, route", [
    ({"default_route": None, "allow_empty_key": True}, "query"),
    ({"default_route": None, "allow_empty_key": False}, None),
    ({"default_route": "query"}, "query")])
def test_a_routers_default_route_as_sentence_transformers_takes_it(
    tmp_path, parameters, route):
  directory = copied(tmp_path, "router")
  _router(lambda values: values["parameters"].update(parameters))(directory)
  assert sentence_transformers.read_pipeline(
      directory).default_route == route


ROUTER_REFUSALS = {
    "dense route": (
        _router(lambda values: values["types"].update(
            document_1_SpladePooling="sentence_transformers.models.Pooling")),
        ROUTER_CONFIG, r"route 'document': module 'document_1_SpladePooling' "
                       r"\(sentence_transformers.models.Pooling\) is not one "
                       r"bert_tf reproduces in a route"),
    "unknown module": (
        _router(lambda values: values["types"].update(
            query_0_SparseStaticEmbedding="my_package.Module")),
        ROUTER_CONFIG, r"route 'query': module 'query_0_SparseStaticEmbedding"
                       r"' \(my_package.Module\) is not one"),
    "SPLADE queries": (
        _router(lambda values: values["structure"].update(
            query=values["structure"]["document"])),
        ROUTER_CONFIG, r"routes query \(Transformer, SpladePooling\) and "
                       r"document \(Transformer, SpladePooling\); bert_tf "
                       r"reproduces a query route of SparseStaticEmbedding"),
    "other routes": (
        _router(lambda values: values.update(structure={
            "q": values["structure"]["query"],
            "d": values["structure"]["document"]})),
        ROUTER_CONFIG, "routes q, d; bert_tf reproduces a query and a "
                       "document route$"),
    "route_mappings": (
        _router(lambda values: values["parameters"].update(
            route_mappings={"('query', None)": "document"})),
        ROUTER_CONFIG, "route_mappings .*; bert_tf routes by task alone"),
    "default_route": (
        _router(lambda values: values["parameters"].update(
            default_route="passage")),
        ROUTER_CONFIG, r"default_route 'passage' is not one of its routes "
                       r"\(query, document\)$"),
    "allow_empty_key": (
        _router(lambda values: values["parameters"].update(
            allow_empty_key="yes")),
        ROUTER_CONFIG, "allow_empty_key is 'yes'; expected true or false$"),
    "types a list": (_router(lambda values: values.update(types=[])),
                     ROUTER_CONFIG, "expected \"types\" and \"structure\" "
                                    "objects"),
    "route a string": (
        _router(lambda values: values["structure"].update(query=STATIC)),
        ROUTER_CONFIG, "a route is a list of module names$"),
    "outside": (
        _router(lambda values: [
            values["structure"].update(query=["../x"]),
            values["types"].update({"../x": values["types"][STATIC]})]),
        ROUTER_CONFIG, "route 'query': '../x' is not a folder inside"),
    "idf JSON path": (json_setter(f"{STATIC}/config.json", path="idf.json"),
                      f"{STATIC}/config.json",
                      "path 'idf.json'; bert_tf reads a "
                      "SparseStaticEmbedding's weights from its "
                      "model.safetensors$"),
    "static weights of 10": (
        _static_weights({"weight": np.ones(10, np.float32)}),
        f"{STATIC}/model.safetensors", "tensor weight holds 10 weights; the "
                                       "BERT's vocab_size is 144$"),
    "static weights named otherwise": (
        _static_weights({"idf": np.ones(144, np.float32)}),
        f"{STATIC}/model.safetensors",
        r"expected a tensor weight \[vocab_size\]$"),
    "query tokenizer of other ids": (
        lambda directory: edit_json(
            os.path.join(directory, STATIC, "tokenizer.json"),
            lambda values: values["model"]["vocab"].update(
                the=values["model"]["vocab"]["a"],
                a=values["model"]["vocab"]["the"])),
        STATIC, "its tokenizer differs from the document route's; bert_tf "
                "tokenises both routes with one$"),
    "Router of an embedder": (
        json_setter("config_sentence_transformers.json",
                    model_type="SentenceTransformer"),
        "modules.json", "modules Router of a SentenceTransformer"),
}


@pytest.mark.parametrize("case", ROUTER_REFUSALS)
def test_a_router_bert_tf_does_not_reproduce_is_refused_in_one_line(
    tmp_path, case):
  edit, relative, message = ROUTER_REFUSALS[case]
  directory = copied(tmp_path, "router")
  edit(directory)
  with pytest.raises(ValueError) as error:
    bert_tf.load_pretrained(directory)
  line = str(error.value)
  assert "\n" not in line and len(line) < 400
  assert re.match(re.escape(os.path.join(directory, relative)) + ": " +
                  message, line), line


def test_a_missing_router_config_is_named(tmp_path):
  directory = copied(tmp_path, "router")
  os.remove(os.path.join(directory, ROUTER_CONFIG))
  with pytest.raises(FileNotFoundError, match=re.escape(os.path.join(
      directory, ROUTER_CONFIG)) + ": missing; a Router module has one"):
    sentence_transformers.read_pipeline(directory)
