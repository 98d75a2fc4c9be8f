import json

import pytest

import bert_tf
from bert_tf.checkpoints.huggingface.config import (TO_HUGGINGFACE_ACTIVATIONS,
                                                    from_huggingface_dict,
                                                    read_config,
                                                    to_huggingface_dict)


def huggingface_values(**overrides):
  values = {"model_type": "bert", "vocab_size": 144, "hidden_size": 32,
            "num_hidden_layers": 2, "num_attention_heads": 4,
            "intermediate_size": 37, "hidden_act": "gelu",
            "layer_norm_eps": 1e-12, "type_vocab_size": 2,
            "max_position_embeddings": 64, "architectures": ["BertModel"],
            "pad_token_id": 0, "transformers_version": "5.24.0"}
  values.update(overrides)
  return values


@pytest.mark.parametrize("theirs, ours", [
    ("gelu", "gelu_exact"), ("gelu_python", "gelu_exact"),
    ("gelu_new", "gelu"), ("gelu_pytorch_tanh", "gelu"),
    ("gelu_fast", "gelu"), ("gelu_accurate", "gelu"), ("relu", "relu"),
    ("tanh", "tanh"), ("linear", "linear")])
def test_huggingface_activations_map_to_the_same_function_and_back(theirs,
                                                                   ours):
  """config.json's name comes back, also through a bert_config.json, which
  names the activation as the original does."""
  config = from_huggingface_dict(
      huggingface_values(hidden_act=theirs))
  assert config.hidden_act == ours
  assert to_huggingface_dict(config)["hidden_act"] == theirs
  original = bert_tf.BertConfig.from_dict(json.loads(config.to_json_string()))
  assert original.to_dict()["hidden_act"] == ours
  converted = to_huggingface_dict(original)
  assert converted["hidden_act"] == theirs


def test_a_kept_huggingface_activation_name_yields_to_a_changed_hidden_act():
  config = from_huggingface_dict(
      huggingface_values(hidden_act="gelu_pytorch_tanh"))
  config.hidden_act = "relu"
  assert to_huggingface_dict(config)["hidden_act"] == "relu"


def test_every_activation_computed_has_a_huggingface_name():
  """config.py checks hidden_act without importing the layers (nor
  TensorFlow): by HIDDEN_ACTS, which must name them all, as must
  TO_HUGGINGFACE_ACTIVATIONS."""
  from bert_tf.layers import activations  # pylint: disable=import-outside-toplevel
  assert sorted(bert_tf.config.HIDDEN_ACTS) == sorted(
      TO_HUGGINGFACE_ACTIVATIONS) == sorted(
          activations.ACTIVATIONS)


@pytest.mark.parametrize("overrides, message", [
    ({"hidden_act": "quick_gelu"}, "hidden_act 'quick_gelu' has no bert_tf"),
    ({"model_type": "roberta"}, "model_type 'roberta' is not a BERT"),
    ({"position_embedding_type": "relative_key"},
     "field 'position_embedding_type' is 'relative_key'"),
    ({"add_cross_attention": True}, "field 'add_cross_attention' is True"),
])
def test_huggingface_configs_bert_tf_cannot_build_are_refused(
    tmp_path, overrides, message):
  path = tmp_path / "config.json"
  path.write_text(json.dumps(huggingface_values(**overrides)))
  with pytest.raises(ValueError, match=f"{path}: .*{message}"):
    read_config(str(path))


def test_a_huggingface_config_maps_its_fields(tmp_path):
  path = tmp_path / "config.json"
  values = huggingface_values(layer_norm_eps=1e-7)
  del values["type_vocab_size"]  # transformers' default: 2
  path.write_text(json.dumps(values))
  config = read_config(str(path))
  assert (config.vocab_size, config.hidden_act, config.layer_norm_eps,
          config.type_vocab_size, config.max_position_embeddings) == (
              144, "gelu_exact", 1e-7, 2, 64)
  assert config.extra_fields == {}
