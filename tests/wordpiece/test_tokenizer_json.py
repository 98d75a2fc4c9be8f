"""Folders transformers 5 saves: tokenizer.json (and tokenizer_config.json),
no vocab.txt. Fixtures: tests/fixtures/huggingface/make_tokenizer_json.py."""

import json
import os
import shutil

import keras
import numpy as np
import pytest

import bert_tf
from bert_tf import tokenization
from bert_tf.checkpoints import conversion
from bert_tf.files.model_files import model_file
from bert_tf.models.load_pretrained import load_pretrained
from bert_tf.text.preprocessor import BertPreprocessor
from bert_tf.wordpiece import learning, tokenizer_json, vocabulary
from tests.support.helpers import run_script
from tests.support.tokenization_cases import corpus_lines

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)),
                        "fixtures", "huggingface")
TOKENIZERS = os.path.join(FIXTURES, "tokenizer_json")
CLASSIFIER = os.path.join(FIXTURES, "transformers5_classifier")
CASINGS = [("uncased", True), ("cased", False)]


def tokenizer_file(casing="uncased"):
  return os.path.join(TOKENIZERS, casing, tokenizer_json.TOKENIZER_FILE)


@pytest.fixture(scope="module")
def expected():
  values = np.load(os.path.join(TOKENIZERS, "expected.npz"))
  return {name: values[name] for name in values.files}


def texts_and_ids(expected, casing):
  """Every text transformers encoded, and its ids (no special tokens)."""
  lengths = expected[f"{casing}_lengths"]
  ids = np.split(expected[f"{casing}_ids"], np.cumsum(lengths)[:-1])
  return corpus_lines() + list(expected["extra_texts"]), ids


@pytest.mark.shared
@pytest.mark.parametrize("casing, lower", CASINGS)
def test_full_tokenizer_gives_transformers_ids(expected, casing, lower):
  """Over the corpus and adversarial lines (a 150-character word, which
  tokenizer.json's limit of 100 makes [UNK] where vocab.txt's 200 would
  not)."""
  texts, ids = texts_and_ids(expected, casing)
  tokenizer = tokenization.FullTokenizer(tokenizer_file(casing), lower)
  assert tokenizer.wordpiece_tokenizer.max_input_chars_per_word == 100
  assert tokenizer.encode_many(texts) == [list(row) for row in ids]


@pytest.mark.shared
@pytest.mark.parametrize("casing, lower", CASINGS)
def test_in_graph_tokenizer_and_preprocessor_give_transformers_ids(
    expected, casing, lower):
  texts, ids = texts_and_ids(expected, casing)
  pair_ids = expected[f"{casing}_pair_input_ids"]
  preprocessor = BertPreprocessor(tokenizer_file(casing), lower,
                                  max_seq_length=pair_ids.shape[1])
  tokens = preprocessor.tokenizer.tokenize_ids(texts).to_list()
  assert tokens == [list(row) for row in ids]
  count = len(pair_ids)
  packed = preprocessor((texts[0:2 * count:2], texts[1:2 * count:2]))
  real = pair_ids >= 0
  np.testing.assert_array_equal(packed["input_ids"], np.where(real, pair_ids,
                                                              0))
  np.testing.assert_array_equal(packed["input_mask"], real)
  np.testing.assert_array_equal(
      packed["segment_ids"],
      np.maximum(expected[f"{casing}_pair_type_ids"], 0))


def test_a_preprocessor_keeps_its_tokenizer_json_through_a_keras_file(
    tmp_path):
  """The asset keeps its name (tokenizer.json), so the loaded layer keeps
  the word length limit; a 150-character word stays [UNK]."""
  layer = BertPreprocessor(tokenizer_file(), True, max_seq_length=8)
  model = keras.Sequential([keras.Input((), dtype="string"), layer])
  path = str(tmp_path / "model.keras")
  model.save(path)
  loaded = keras.saving.load_model(path).layers[0]
  assert loaded.tokenizer.max_input_chars_per_word == 100
  texts = ["hello " + "under" * 30]
  np.testing.assert_array_equal(loaded(texts)["input_ids"],
                                layer(texts)["input_ids"])
  assert loaded.tokenizer.tokenize_ids(texts).to_list()[0][-1] == \
      loaded.tokenizer.vocab["[UNK]"]


def mutated(tmp_path, change, name="tokenizer.json"):
  """A copy of the uncased fixture tokenizer.json changed by change(dict)."""
  with open(tokenizer_file(), encoding="utf-8") as reader:
    values = json.load(reader)
  change(values)
  path = tmp_path / name
  path.write_text(json.dumps(values), encoding="utf-8")
  return str(path)


def _set(section, key, value):
  return lambda values: values[section].__setitem__(key, value)


def _add_token(special, token_id, content="hello"):
  return lambda values: values["added_tokens"].append(
      {"id": token_id, "content": content, "special": special})


REFUSALS = {
    "model.type": _set("model", "type", "BPE"),
    "pre_tokenizer.type": _set("pre_tokenizer", "type", "Whitespace"),
    "normalizer.type": _set("normalizer", "type", "NFC"),
    "normalizer.lowercase True with normalizer.strip_accents False":
        _set("normalizer", "strip_accents", False),
    "normalizer.lowercase False with normalizer.strip_accents True":
        lambda values: values["normalizer"].update(
            lowercase=False, strip_accents=True),
    "normalizer.handle_chinese_chars": _set("normalizer",
                                            "handle_chinese_chars", False),
    "normalizer.clean_text": _set("normalizer", "clean_text", False),
    "model.continuing_subword_prefix": _set(
        "model", "continuing_subword_prefix", "@@"),
    "model.unk_token": _set("model", "unk_token", "<unk>"),
    r"added_tokens\[5\] \('hello'\) is not special": _add_token(False, 7),
    r"added_tokens\[5\] \('\[SEP\]'\) has id 7": _add_token(True, 7, "[SEP]"),
    "model.vocab's ids": lambda values: values["model"]["vocab"].update(
        hello=100000),
    r"added_tokens\[4\] \('\[MASK\]'\) has lstrip True; bert_tf keeps "
    r"special tokens whole as written":
        lambda values: values["added_tokens"][4].update(lstrip=True),
    r"added_tokens\[4\] \('\[MASK\]'\) has rstrip True":
        lambda values: values["added_tokens"][4].update(rstrip=True),
    r"added_tokens\[0\] \('\[PAD\]'\) has single_word True":
        lambda values: values["added_tokens"][0].update(single_word=True),
    r"added_tokens\[1\] \('\[UNK\]'\) has normalized True":
        lambda values: values["added_tokens"][1].update(normalized=True),
    r"added_tokens\[2\]: its content is None; expected a non-empty string":
        lambda values: values["added_tokens"][2].pop("content"),
    r"added_tokens\[5\]: its content is ''; expected":
        _add_token(True, 7, ""),
    "added_tokens is not a list of objects":
        lambda values: values.update(added_tokens={"0": "[PAD]"}),
}


@pytest.mark.parametrize("field", REFUSALS)
def test_a_tokenizer_json_bert_tf_cannot_follow_is_refused_by_field(
    tmp_path, field):
  path = mutated(tmp_path, REFUSALS[field])
  with pytest.raises(ValueError, match=f"^{path}: {field}") as error:
    tokenizer_json.read_tokenizer_json(path)
  assert "\n" not in str(error.value)


def test_a_do_lower_case_against_the_tokenizer_json_is_refused():
  path = tokenizer_file("cased")
  for check in (lambda: tokenization.FullTokenizer(path, True),
                lambda: BertPreprocessor(path, True),
                lambda: vocabulary.check_casing(path, True)):
    with pytest.raises(ValueError, match=f"^{path}: normalizer.lowercase is "
                       f"False, but do_lower_case=True"):
      check()
  assert not vocabulary.vocab_is_lower_cased(path)
  assert vocabulary.vocab_is_lower_cased(tokenizer_file("uncased"))


@pytest.fixture
def classifier_copy(tmp_path):
  folder = tmp_path / "folder"
  shutil.copytree(CLASSIFIER, folder)
  return folder


@pytest.mark.parametrize("field, value", [("do_lower_case", False),
                                          ("strip_accents", False)])
def test_a_tokenizer_config_against_the_tokenizer_json_is_refused(
    classifier_copy, field, value):
  config_file = classifier_copy / tokenizer_json.TOKENIZER_CONFIG_FILE
  values = json.loads(config_file.read_text())
  values.pop("do_lower_case")
  values[field] = value
  config_file.write_text(json.dumps(values))
  with pytest.raises(ValueError, match=(
      f"^{config_file}: {field} False, but "
      f"{classifier_copy / 'tokenizer.json'}'s normalizer lower-cases")):
    conversion.open_model_directory(str(classifier_copy))


def test_a_vocab_txt_unlike_the_tokenizer_json_is_refused(classifier_copy):
  tokens = list(tokenization.load_vocab(str(classifier_copy /
                                            "tokenizer.json")))
  vocab_file = classifier_copy / "vocab.txt"
  learning.write_vocab(tokens, str(vocab_file))
  assert conversion.open_model_directory(str(classifier_copy)).vocab_file == \
      str(vocab_file)
  tokens[5], tokens[6] = tokens[6], tokens[5]
  vocab_file.unlink()
  learning.write_vocab(tokens, str(vocab_file))
  with pytest.raises(ValueError, match=(
      f"^{vocab_file} and {classifier_copy / 'tokenizer.json'} hold "
      f"different vocabularies .* first differing at line 6")):
    conversion.open_model_directory(str(classifier_copy))


@pytest.fixture(scope="module")
def classifier_expected():
  return np.load(os.path.join(CLASSIFIER, "expected.npz"))


def bert_tf_logits(pretrained, expected):
  """The model's logits for the sentences, tokenized by its preprocessor
  (whose ids must be transformers')."""
  inputs = pretrained.preprocessor()(list(expected["sentences"]))
  width = expected["input_ids"].shape[1]
  np.testing.assert_array_equal(inputs["input_ids"][:, :width],
                                expected["input_ids"])
  return pretrained.model(inputs)["logits"]


def test_load_pretrained_reads_a_transformers5_folder(classifier_expected):
  pretrained = load_pretrained(CLASSIFIER)
  assert pretrained.vocab_file == os.path.join(CLASSIFIER, "tokenizer.json")
  assert pretrained.do_lower_case is True
  assert pretrained.model_max_length == 64
  assert pretrained.preprocessor().max_seq_length == 64
  logits = bert_tf_logits(pretrained, classifier_expected)
  np.testing.assert_allclose(logits, classifier_expected["logits"],
                             atol=1e-5)
  encoder = load_pretrained(CLASSIFIER, bert_tf.BertEncoder)
  assert encoder.vocab_file == pretrained.vocab_file
  with pytest.raises(ValueError, match=(
      f"^--do_lower_case=False, but {pretrained.vocab_file} says "
      f"do_lower_case True")):
    vocabulary.check_casing(pretrained.vocab_file, False,
                            tokenizer_files=tokenizer_json.read_folder(
                                CLASSIFIER, model_file))


def test_convert_checkpoint_converts_a_transformers5_folder(
    tmp_path, classifier_expected):
  original = tmp_path / "original"
  result = run_script("convert_checkpoint.py", {
      "input_dir": CLASSIFIER, "output_dir": original,
      "output_format": "original"})
  assert result.returncode == 0, result.stderr
  assert tokenization.load_vocab(str(original / "vocab.txt")) == \
      tokenization.load_vocab(os.path.join(CLASSIFIER, "tokenizer.json"))
  assert not (original / "tokenizer.json").exists()
  folder = tmp_path / "huggingface"
  conversion.convert(str(original), str(folder), conversion.HUGGINGFACE)
  assert (folder / "vocab.txt").exists()
  back = tmp_path / "back"
  conversion.convert(CLASSIFIER, str(back), conversion.HUGGINGFACE)
  for name in ("tokenizer.json", "tokenizer_config.json"):
    assert (back / name).read_bytes() == \
        open(os.path.join(CLASSIFIER, name), "rb").read()
  assert not (back / "vocab.txt").exists()
  logits = bert_tf_logits(load_pretrained(str(back)), classifier_expected)
  np.testing.assert_allclose(logits, classifier_expected["logits"],
                             atol=1e-5)


@pytest.fixture(scope="module")
def transformers_reference():
  """transformers' own ids (tests/fixtures/huggingface/
  make_transformers_tokenization.py)."""
  with open(os.path.join(FIXTURES, "transformers_tokenization.json"),
            encoding="utf-8") as reader:
    return json.load(reader)


# The edits of make_transformers_tokenization.py's EDITS.
_UNUSED5 = {"id": 6, "content": "[unused5]", "single_word": False,
            "lstrip": False, "rstrip": False, "normalized": False,
            "special": True}
EDITS = {
    "max_input_chars_per_word 5": _set("model", "max_input_chars_per_word",
                                       5),
    "max_input_chars_per_word 300": _set("model", "max_input_chars_per_word",
                                         300),
    "[unused5] special": lambda values: values["added_tokens"].append(
        _UNUSED5),
}


@pytest.mark.parametrize("edit", EDITS)
def test_transformers_rules_follow_transformers_on_an_edited_tokenizer_json(
    tmp_path, transformers_reference, edit):
  """transformers ignores model.max_input_chars_per_word (100 always) and
  keeps whole a token added_tokens marks special; the original's rules
  keep the file's limit and split every bracketed token."""
  path = mutated(tmp_path, EDITS[edit])
  texts = transformers_reference["edited_texts"]
  layer = BertPreprocessor(path, True, 64, tokenization_rules="transformers")
  cls, sep = layer.tokenizer.vocab["[CLS]"], layer.tokenizer.vocab["[SEP]"]
  ids = layer.tokenizer.tokenize_ids(texts).to_list()
  assert [[cls, *row, sep] for row in ids] == \
      transformers_reference["edited"][edit]
  original = BertPreprocessor(path, True, 64).tokenizer
  exact = tokenization.FullTokenizer(path, True)
  assert original.tokenize_ids(texts).to_list() == exact.encode_many(texts)


def _config_edit(**values):
  return lambda config: config.update(values)


def _decoder(**flags):
  return {"0": {"content": "[PAD]", "special": True, **flags}}


CONFIG_REFUSALS = {
    r"mask_token is '<mask>'; bert_tf's BERT tokenizer has '\[MASK\]'":
        _config_edit(mask_token="<mask>"),
    r"unk_token is None": _config_edit(unk_token=None),
    r"mask_token \('\[MASK\]'\) has lstrip True": _config_edit(
        mask_token={"content": "[MASK]", "lstrip": True}),
    r"added_tokens_decoder\['0'\] \('\[PAD\]'\) has lstrip True":
        _config_edit(added_tokens_decoder=_decoder(lstrip=True)),
    r"added_tokens_decoder\['0'\] \('\[PAD\]'\) is not special":
        _config_edit(added_tokens_decoder=_decoder(special=False)),
    "added_tokens_decoder is not an object of objects":
        _config_edit(added_tokens_decoder=["[PAD]"]),
    "additional_special_tokens is not a list of tokens":
        _config_edit(additional_special_tokens="[unused5]"),
    r"'\[unused5\]' is a special token, which transformers keeps whole in "
    r"text; bert_tf keeps whole \[PAD\], \[UNK\], \[CLS\], \[SEP\], "
    r"\[MASK\] and a tokenizer.json's added tokens":
        _config_edit(additional_special_tokens=["[unused5]"]),
    r"'\[unused6\]' is a special token":
        _config_edit(added_tokens_decoder={
            "7": {"content": "[unused6]", "special": True}}),
}


@pytest.mark.parametrize("message", CONFIG_REFUSALS)
def test_special_tokens_bert_tf_cannot_keep_as_transformers_are_refused(
    classifier_copy, message):
  """tokenizer_config.json's special tokens: named otherwise than BERT's,
  matched otherwise than as written, or more than bert_tf keeps whole."""
  config_file = classifier_copy / tokenizer_json.TOKENIZER_CONFIG_FILE
  values = json.loads(config_file.read_text())
  CONFIG_REFUSALS[message](values)
  config_file.write_text(json.dumps(values))
  with pytest.raises(ValueError, match=f"^{config_file}: {message}") as error:
    conversion.open_model_directory(str(classifier_copy))
  assert "\n" not in str(error.value)


def test_a_tokenizer_json_s_special_token_must_be_what_transformers_keeps(
    classifier_copy):
  """A token tokenizer.json marks special is kept whole where bert_tf reads
  that file as the vocabulary, and refused where a vocab.txt beside it is
  read instead or tokenizer_config.json's added_tokens_decoder (which
  transformers follows) leaves it out."""
  tokenizer_file = classifier_copy / "tokenizer.json"
  values = json.loads(tokenizer_file.read_text())
  token = "[unused4]"
  values["added_tokens"].append({**_UNUSED5, "content": token,
                                 "id": values["model"]["vocab"][token]})
  tokenizer_file.write_text(json.dumps(values))
  source = conversion.open_model_directory(str(classifier_copy))
  assert token in source.vocabulary.special_tokens
  config_file = classifier_copy / tokenizer_json.TOKENIZER_CONFIG_FILE
  config = json.loads(config_file.read_text())
  config_file.write_text(json.dumps({**config, "added_tokens_decoder": {}}))
  with pytest.raises(ValueError, match=(
      rf"^{tokenizer_file}: added token '\[unused4\]' is not in "
      rf"{config_file}'s added_tokens_decoder, which transformers follows")):
    conversion.open_model_directory(str(classifier_copy))
  config_file.write_text(json.dumps(config))
  learning.write_vocab(list(values["model"]["vocab"]),
                       str(classifier_copy / "vocab.txt"))
  with pytest.raises(ValueError, match=(
      rf"^{tokenizer_file}: '\[unused4\]' is a special token")):
    conversion.open_model_directory(str(classifier_copy))


@pytest.mark.parametrize("length, read", [
    (24, 24), (3, 3), (int(1e30), None), (float("inf"), None), (None, None)])
def test_model_max_length_is_an_integer_or_unset(tmp_path, length, read):
  """transformers writes int(1e30) where none was set."""
  path = tmp_path / "tokenizer_config.json"
  path.write_text(json.dumps({"model_max_length": length}))
  assert tokenizer_json.read_tokenizer_config(str(path)).model_max_length \
      == read


@pytest.mark.parametrize("length", ["24", 24.0, -5, 0, 2, True, [24]])
def test_a_model_max_length_transformers_cannot_use_is_refused(tmp_path,
                                                               length):
  path = tmp_path / "tokenizer_config.json"
  path.write_text(json.dumps({"model_max_length": length}))
  with pytest.raises(ValueError, match=(
      f"^{path}: model_max_length is .*; expected an integer of at least "
      f"3$")):
    tokenizer_json.read_tokenizer_config(str(path))


def test_a_word_limit_too_large_for_tensorflow_text_is_followed(tmp_path):
  """Under the original's rules a limit of 10**9 (over the int32 that
  TensorFlow Text's byte limit is) splits a 300-character word as
  FullTokenizer does; transformers' rules make it [UNK]."""
  path = mutated(tmp_path, _set("model", "max_input_chars_per_word", 10**9))
  text = ["hello " + "x" * 300]
  original = BertPreprocessor(path, True, 8).tokenizer
  assert original.tokenize_ids(text).to_list() == \
      tokenization.FullTokenizer(path, True).encode_many(text)
  transformers = BertPreprocessor(path, True, 8,
                                  tokenization_rules="transformers")
  assert transformers.tokenizer.tokenize_ids(text).to_list()[0][-1] == \
      transformers.tokenizer.vocab["[UNK]"]

