import json

import pytest

import bert_tf
from tests.helpers import ORIGINAL_TINY


def test_original_defaults():
  config = bert_tf.BertConfig(vocab_size=30522)
  assert config.to_dict() == {
      "vocab_size": 30522, "hidden_size": 768, "num_hidden_layers": 12,
      "num_attention_heads": 12, "intermediate_size": 3072,
      "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
      "attention_probs_dropout_prob": 0.1, "max_position_embeddings": 512,
      "type_vocab_size": 16, "initializer_range": 0.02}


@pytest.mark.shared
def test_reads_released_file_and_round_trips(tmp_path):
  config = bert_tf.BertConfig.from_json_file(f"{ORIGINAL_TINY}/bert_config.json")
  with open(f"{ORIGINAL_TINY}/bert_config.json") as reader:
    assert config.to_dict() == json.load(reader)
  config.to_json_file(str(tmp_path / "bert_config.json"))
  assert bert_tf.BertConfig.from_json_file(
      str(tmp_path / "bert_config.json")) == config
  assert bert_tf.BertConfig.from_dict(config.to_dict()) == config
  assert list(tmp_path.iterdir()) == [tmp_path / "bert_config.json"]


def test_missing_fields_take_defaults():
  config = bert_tf.BertConfig.from_dict({"vocab_size": 10})
  assert config.hidden_size == 768 and config.type_vocab_size == 16


@pytest.mark.parametrize("values, message", [
    ({"vocab_size": 10, "hidden_size": 30, "num_attention_heads": 4},
     "hidden_size \\(30\\) is not a multiple of num_attention_heads \\(4\\)"),
    ({"vocab_size": 10, "hidden_act": "swishy"}, "unknown hidden_act 'swishy'"),
    ({"hidden_size": 8}, "missing required field 'vocab_size'"),
    ({"vocab_size": "100"}, "field 'vocab_size' must be int"),
    ({"vocab_size": 10, "num_hidden_layers": 2.5},
     "field 'num_hidden_layers' must be int"),
    ({"vocab_size": 10, "hidden_dropout_prob": "0.1"},
     "field 'hidden_dropout_prob' must be float"),
    ({"vocab_size": 10, "hidden_dropout_prob": 1.5},
     "'hidden_dropout_prob' must be in \\[0, 1\\)"),
    ({"vocab_size": 10, "hiden_size": 8}, "unknown field\\(s\\) \\['hiden_size'\\]"),
    ({"vocab_size": 0}, "'vocab_size' must be at least 1"),
])
def test_invalid_config_names_the_field(values, message):
  with pytest.raises(ValueError, match=message):
    bert_tf.BertConfig.from_dict(values)


def test_invalid_json_names_file_and_line(tmp_path):
  path = tmp_path / "bert_config.json"
  path.write_text('{\n  "vocab_size": 10,\n  "hidden_size": \n}\n')
  with pytest.raises(ValueError, match=f"{path}: not valid JSON \\(line 4"):
    bert_tf.BertConfig.from_json_file(str(path))


def test_error_from_file_names_the_file(tmp_path):
  path = tmp_path / "bert_config.json"
  path.write_text('{"vocab_size": 10, "hidden_act": "swishy"}')
  with pytest.raises(ValueError, match=f"{path}: unknown hidden_act"):
    bert_tf.BertConfig.from_json_file(str(path))


def test_direct_construction_is_validated():
  with pytest.raises(ValueError, match="not a multiple"):
    bert_tf.BertConfig(vocab_size=10, hidden_size=10, num_attention_heads=3)
