import json

import pytest

import bert_tf
from tests.support.helpers import ORIGINAL_TINY


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
    ({"vocab_size": 0}, "'vocab_size' must be at least 1"),
    # JSON as Python reads it has NaN and Infinity.
    ({"vocab_size": 10, "initializer_range": float("nan")},
     "field 'initializer_range' must be a finite number, got nan"),
    ({"vocab_size": 10, "initializer_range": float("inf")},
     "field 'initializer_range' must be a finite number, got inf"),
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


# Google's multilingual and Chinese releases (multi_cased_L-12_H-768_A-12,
# chinese_L-12_H-768_A-12) ship bert_config.json as Python 2's json.dumps
# wrote it: 17 fields, ", " at every line end.
def released_text(vocab_size, final_newline):
  lines = [f'  "{name}": {value}' for name, value in (
      ("attention_probs_dropout_prob", "0.1"),
      ("directionality", '"bidi"'), ("hidden_act", '"gelu"'),
      ("hidden_dropout_prob", "0.1"), ("hidden_size", "768"),
      ("initializer_range", "0.02"), ("intermediate_size", "3072"),
      ("max_position_embeddings", "512"), ("num_attention_heads", "12"),
      ("num_hidden_layers", "12"), ("pooler_fc_size", "768"),
      ("pooler_num_attention_heads", "12"), ("pooler_num_fc_layers", "3"),
      ("pooler_size_per_head", "128"),
      ("pooler_type", '"first_token_transform"'), ("type_vocab_size", "2"),
      ("vocab_size", str(vocab_size)))]
  return "{\n" + ", \n".join(lines) + "\n}" + ("\n" if final_newline else "")


@pytest.mark.parametrize("vocab_size", [119547, 21128])
@pytest.mark.parametrize("final_newline", [False, True])
def test_googles_17_field_configs_open_and_round_trip_byte_for_byte(
    tmp_path, vocab_size, final_newline, caplog):
  path = tmp_path / "bert_config.json"
  path.write_bytes(released_text(vocab_size, final_newline).encode())
  config = bert_tf.BertConfig.from_json_file(str(path))
  assert config == bert_tf.BertConfig(vocab_size=vocab_size,
                                      type_vocab_size=2)
  assert config.extra_fields == {
      "directionality": "bidi", "pooler_fc_size": 768,
      "pooler_num_attention_heads": 12, "pooler_num_fc_layers": 3,
      "pooler_size_per_head": 128, "pooler_type": "first_token_transform"}
  assert not caplog.records  # known fields: no warning
  copy = tmp_path / "copy" / "bert_config.json"
  config.to_json_file(str(copy))
  assert copy.read_bytes() == path.read_bytes()


def test_a_changed_config_is_written_in_the_original_layout_with_its_extras(
    tmp_path):
  path = tmp_path / "bert_config.json"
  path.write_text(released_text(21128, final_newline=False))
  config = bert_tf.BertConfig.from_json_file(str(path))
  config.hidden_dropout_prob = 0.0
  written = json.loads(config.to_json_string())
  assert written["hidden_dropout_prob"] == 0.0
  assert written["pooler_type"] == "first_token_transform"
  assert config.to_json_string() == json.dumps(
      written, indent=2, sort_keys=True) + "\n"


def test_an_unknown_field_is_kept_with_a_warning(caplog):
  config = bert_tf.BertConfig.from_dict({"vocab_size": 10, "hiden_size": 8})
  assert config.to_dict()["hiden_size"] == 8
  assert "['hiden_size'] are not BERT's" in caplog.text


@pytest.mark.parametrize("field, value", [
    ("position_embedding_type", "relative_key"),
    ("use_relative_position", True),
    ("is_decoder", True),
    ("num_hidden_groups", 2),
])
def test_a_field_bert_tf_cannot_build_is_refused_by_name_and_value(
    field, value):
  with pytest.raises(ValueError, match=f"field '{field}' is {value!r}"):
    bert_tf.BertConfig.from_dict({"vocab_size": 10, field: value})


def test_layer_norm_eps_is_written_only_where_it_is_not_the_originals():
  assert "layer_norm_eps" not in bert_tf.BertConfig(vocab_size=10).to_dict()
  config = bert_tf.BertConfig.from_dict({"vocab_size": 10,
                                         "layer_norm_eps": 1e-5})
  assert config.to_dict()["layer_norm_eps"] == 1e-5
  with pytest.raises(ValueError, match="'layer_norm_eps' must be in"):
    bert_tf.BertConfig.from_dict({"vocab_size": 10, "layer_norm_eps": 0.0})


def test_a_huggingface_config_json_is_refused_naming_its_reader(tmp_path):
  path = tmp_path / "config.json"
  path.write_text(json.dumps({"model_type": "bert", "vocab_size": 144}))
  with pytest.raises(ValueError, match=r"huggingface\.config\.read_config"):
    bert_tf.BertConfig.from_json_file(str(path))
