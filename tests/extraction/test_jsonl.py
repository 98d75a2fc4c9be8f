"""extract_features' reading and output against the original's own run on
tests/fixtures/extract_features (make_reference.py)."""

import json
import os

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import bert_tf
from bert_tf import tokenization
from bert_tf.data.text_inputs import encode_texts
from bert_tf.extraction.jsonl import jsonl_line, rounded_values
from bert_tf.extraction.text_lines import LineExample, read_lines
from bert_tf.layers.layer_combination import select_layers
from tests.support.helpers import ORIGINAL_TINY, PROJECT_DIR
from tests.support.original_extract_features import originals_line

FIXTURES = os.path.join(PROJECT_DIR, "tests", "fixtures", "extract_features")
INPUT = os.path.join(FIXTURES, "input.txt")
VOCAB = os.path.join(FIXTURES, "vocab.txt")
LAYERS = (-1, 0)
MAX_SEQ_LENGTH = 16


def original_lines():
  with open(os.path.join(FIXTURES, "original_output.jsonl"),
            encoding="utf-8") as reader:
    return reader.read().splitlines(keepends=True)


def test_every_line_is_an_example_split_at_the_last_separator():
  examples = read_lines(INPUT)
  assert len(examples) == len(original_lines()) == 15
  assert examples[1:10] == [
      LineExample(1, ""), LineExample(2, "hello", "world"),
      LineExample(3, "a ||| b", "c"), LineExample(4, "the dog|||the cat"),
      LineExample(5, "it ran |||"), LineExample(6, "he ran |||"),
      LineExample(7, "She was running."),
      LineExample(8, "||| only the second"), LineExample(9, "|||")]


def test_lines_end_at_newlines_only(tmp_path):
  path = tmp_path / "input.txt"
  path.write_bytes(b"a\r\nb\rc ||| d\n\n  \n")
  assert read_lines(str(path)) == [
      LineExample(0, "a"), LineExample(1, "b\rc", "d"), LineExample(2, ""),
      LineExample(3, "")]
  path.write_bytes(b"ok\n\xff\n")
  with pytest.raises(ValueError, match=r"input.txt:2: not UTF-8 text"):
    read_lines(str(path))


@given(st.floats(width=32, allow_nan=False, allow_infinity=False,
                 min_value=-1e6, max_value=1e6))
def test_values_round_as_the_original_rounds_them(value):
  assert repr(rounded_values(np.float32(value)).item()) == \
      repr(round(float(np.float32(value)), 6))


def test_a_line_is_the_originals_text_for_its_values():
  for line in original_lines():
    record = json.loads(line)
    tokens = [feature["token"] for feature in record["features"]]
    values = np.array([[layer["values"] for layer in feature["layers"]]
                       for feature in record["features"]], np.float32)
    assert jsonl_line(record["linex_index"], tokens, LAYERS,
                      values.transpose(1, 0, 2)) == line


# Values where printing changes form: exponents below 1e-4, halves that
# round to even, -0.0, the integer digits' limits, and what json prints
# itself (1000 and over, infinities, NaN).
EDGE_VALUES = [0.0, -0.0, 1e-4, -1e-4, 9.95e-5, 5e-7, -5e-7, 4.9999e-7,
               1.5e-6, 0.0078125, -0.0234375, 1e-45, 0.5, 9.9999995,
               99.9999995, 999.9999, 999.99995, 1000.0, -1234.5, 3.4e38,
               float("inf"), float("-inf"), float("nan")]


@given(hnp.arrays(np.float32, hnp.array_shapes(min_dims=3, max_dims=3,
                                               max_side=6),
                  elements=st.one_of(st.floats(width=32),
                                     st.sampled_from(EDGE_VALUES),
                                     st.floats(-2 ** -10, 2 ** -10, width=32))))
def test_lines_are_the_originals_bytes_for_any_values(values):
  tokens = [f"t{position}\u00e9\"" for position in range(values.shape[1])]
  layers = list(range(-1, -values.shape[0] - 1, -1))
  assert jsonl_line(7, tokens, layers, values) == originals_line(
      7, tokens, layers, values)


@pytest.mark.shared
def test_tokens_and_values_are_the_originals():
  """The same checkpoint and lines: the same tokens, values within 1e-4."""
  tokenizer = tokenization.FullTokenizer(VOCAB, do_lower_case=True)
  examples = read_lines(INPUT)
  features = encode_texts(tokenizer, [example.text_a for example in examples],
                          [example.text_b for example in examples],
                          MAX_SEQ_LENGTH)
  encoder = bert_tf.BertEncoder(bert_tf.BertConfig.from_json_file(
      os.path.join(ORIGINAL_TINY, "bert_config.json")))
  bert_tf.load_checkpoint(encoder,
                          os.path.join(ORIGINAL_TINY, "bert_model.ckpt"))
  layers = np.stack(select_layers(encoder(features, training=False),
                                  LAYERS), axis=1)
  for row, line in enumerate(original_lines()):
    record = json.loads(line)
    assert record["linex_index"] == row
    length = int(features["input_mask"][row].sum())
    assert [feature["token"] for feature in record["features"]] == \
        tokenizer.convert_ids_to_tokens(
            features["input_ids"][row, :length].tolist())
    expected = np.array([[layer["values"] for layer in feature["layers"]]
                         for feature in record["features"]])
    assert [[layer["index"] for layer in feature["layers"]]
            for feature in record["features"]] == [list(LAYERS)] * length
    np.testing.assert_allclose(layers[row, :, :length].transpose(1, 0, 2),
                               expected, atol=1e-4)
