"""run_scripts/run_ner.py end to end on a synthetic CoNLL-2003 corpus."""

import keras
import numpy as np
import pytest
import tensorflow as tf
from seqeval.metrics.sequence_labeling import get_entities

import bert_tf
from bert_tf import tokenization
from bert_tf.layers import layer_combination
from bert_tf.tasks.ner import examples as conll, features as tagging_features
from bert_tf.tasks.ner.metrics import entity_metrics
from bert_tf.text.ner.features import word_values
from tests.support.conll_fixtures import synthetic_conll
from tests.support.helpers import (FINE_TUNING_FLAGS,
                                   assert_cases_fail_before_writing,
                                   assert_checkpoints_close, assert_help_lists,
                                   kill_after_checkpoint, run_script,
                                   tiny_config)
from tests.support.serving import serve_as_documented, serve_export
from tests.support.squad_fixtures import DEMO_VOCAB

VOCAB_SIZE = len(open(DEMO_VOCAB, encoding="utf-8").readlines())
# No dropout: a resumed run then ends with the weights of an unbroken one.
NO_DROPOUT = dict(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
TRAINING = dict(max_seq_length=64, train_batch_size=16, learning_rate=2e-3,
                num_train_epochs=6, iterations_per_loop=10,
                save_checkpoints_steps=40, seed=1)


def write_corpus(data_dir):
  data_dir.mkdir(exist_ok=True)
  for seed, (name, documents) in enumerate(
      (("eng.train", 150), ("eng.testa", 30), ("eng.testb", 30))):
    synthetic_conll(data_dir / name, seed, documents)


def common_flags(tmp_path, num_hidden_layers=2, **overrides):
  config = tmp_path / f"bert_config_{num_hidden_layers}.json"
  config.write_text(tiny_config(vocab_size=VOCAB_SIZE,
                                num_hidden_layers=num_hidden_layers,
                                **NO_DROPOUT).to_json_string())
  return {"vocab_file": DEMO_VOCAB, "bert_config_file": config,
          "data_dir": tmp_path / "data", **TRAINING, **overrides}


def read_results(path):
  return dict(line.split(" = ") for line in path.read_text().splitlines())


def run_ner(flag_values):
  result = run_script("run_ner.py", flag_values)
  assert result.returncode == 0, result.stderr[-3000:]
  return result


@pytest.fixture(scope="module")
def ner_run(tmp_path_factory):
  """A tiny random BERT fine-tuned on the synthetic corpus: dev evaluated,
  test predicted, exported."""
  tmp_path = tmp_path_factory.mktemp("ner")
  write_corpus(tmp_path / "data")
  flag_values = common_flags(tmp_path, output_dir=tmp_path / "output",
                             do_train=True, do_eval=True, do_predict=True,
                             export_dir=tmp_path / "export")
  run_ner(flag_values)
  return tmp_path, flag_values


def test_fine_tuning_learns_the_entities(ner_run):
  tmp_path, _ = ner_run
  for name in ("eval_results.txt", "test_results.txt"):
    results = read_results(tmp_path / "output" / name)
    assert float(results["eval_f1"]) >= 0.9, (name, results)
    assert results["global_step"] == "191"
    assert sorted(results) == sorted(
        ["eval_f1", "eval_precision", "eval_recall", "eval_loss",
         "global_step"] + [f"eval_{kind}_{figure}"
                           for kind in conll.ENTITY_TYPES
                           for figure in ("f1", "precision", "recall")])


@pytest.mark.rerun
def test_bucket_by_length_learns_the_entities_as_well(ner_run, tmp_path):
  """--bucket_by_length cuts the per-position labels with the inputs:
  the entities are learned as well."""
  fixed_dir, flag_values = ner_run
  flag_values = {name: value for name, value in flag_values.items()
                 if name != "export_dir"}
  run_ner({**flag_values, "output_dir": tmp_path / "output",
           "do_predict": False, "bucket_by_length": True})
  f1 = {directory: float(read_results(
      directory / "output" / "eval_results.txt")["eval_f1"])
        for directory in (fixed_dir, tmp_path)}
  assert f1[tmp_path] >= 0.9
  assert abs(f1[tmp_path] - f1[fixed_dir]) <= 0.05, f1


# Which files a run writes, and the F1 of the tags in them: Python's work,
# the same on every TensorFlow; one leg of CI runs it.
@pytest.mark.parametrize("split,file_name,results_name", [
    ("dev", "eng.testa", "eval_results.txt"),
    ("test", "eng.testb", "test_results.txt")])
@pytest.mark.rerun
def test_predictions_are_conlleval_input_in_file_order(ner_run, split,
                                                       file_name,
                                                       results_name):
  tmp_path, _ = ner_run
  sentences = conll.read_conll(str(tmp_path / "data" / file_name))
  blocks = (tmp_path / "output" / f"{split}_predictions.txt").read_text() \
      .split("\n\n")
  assert blocks[-1] == "" and len(blocks) == len(sentences) + 1
  predicted = []
  for sentence, block in zip(sentences, blocks):
    rows = [line.split(" ") for line in block.splitlines()]
    assert [row[:2] for row in rows] == [list(pair) for pair in
                                         zip(sentence.words, sentence.tags)]
    predicted.append([row[2] for row in rows])
  # IOB1 like the input: no B- except between two entities of one type.
  assert conll.detect_scheme([conll.Sentence(["w"] * len(tags), tags, 0, 0)
                              for tags in predicted]) == conll.IOB1
  assert all(conll.from_iob2(conll.to_iob2(tags), conll.IOB1) == tags
             for tags in predicted)
  # The results are the entity F1 of exactly the tags written.
  results = read_results(tmp_path / "output" / results_name)
  expected = entity_metrics([sentence.tags for sentence in sentences],
                            predicted)
  assert results["eval_f1"] == str(np.float32(expected["eval_f1"]))


def trained_tagger(tmp_path, flag_values):
  model = bert_tf.models.BertTagger(
      bert_tf.BertConfig.from_json_file(str(flag_values["bert_config_file"])),
      num_labels=9)
  bert_tf.load_checkpoint(model, str(tmp_path / "output" / "model.ckpt-191"))
  return model


def test_the_export_serves_the_tag_probabilities(ner_run):
  tmp_path, flag_values = ner_run
  tokenizer = tokenization.FullTokenizer(DEMO_VOCAB, True)
  sentences = conll.read_conll(str(tmp_path / "data" / "eng.testb"))[:5]
  features = tagging_features.convert_sentences(sentences, tokenizer, 64,
                                                document_context=True)
  inputs = {name: features[name] for name in
            ("input_ids", "input_mask", "segment_ids")}
  signatures, outputs = serve_as_documented(
      tmp_path / "export" / "1", {"serving_default": inputs}, tmp_path, "ner")
  assert signatures == ["serve_text", "serving_default"]
  probabilities = np.array(outputs["serving_default"]["probabilities"])
  assert probabilities.shape == (len(features["input_ids"]), 64, 9)
  expected = trained_tagger(tmp_path, flag_values)(inputs)
  np.testing.assert_allclose(probabilities, expected["probabilities"],
                             atol=1e-5)
  shapes = tf.train.load_checkpoint(
      str(tmp_path / "output" / "model.ckpt-191")).get_variable_to_shape_map()
  assert shapes["cls/ner/output_weights"] == [9, 32]
  assert shapes["cls/ner/output_bias"] == [9]


def test_serve_text_tags_words_as_run_ner_and_reads_entities(ner_run):
  """Raw text is tagged word by word as run_ner tags a sentence of those
  words (long ones in chunks with context), and the entities are
  conlleval's reading of the tags, with the text's own characters."""
  tmp_path, flag_values = ner_run
  sentences = conll.read_conll(str(tmp_path / "data" / "eng.testb"))[:40]
  # A text of many sequences' pieces: chunks with context both sides.
  long_words = [word for sentence in sentences[:6] for word in
                sentence.words] * 3
  texts = [" ".join(sentence.words) for sentence in sentences] + [
      " ".join(long_words), "Café  au\u00a0lait, 東京 😀 Ça\u0301va."]
  _, outputs = serve_export(tmp_path / "export" / "1",
                            {"serve_text": {"text": texts}}, tmp_path)
  served = outputs["serve_text"]
  tokenizer = tokenization.FullTokenizer(DEMO_VOCAB, True)
  words = [tokenizer.basic_tokenizer.tokenize(text) for text in texts]
  assert len(words[-2]) > 3 * 62
  features = tagging_features.convert_sentences(
      [conll.Sentence(word_list, ["O"] * len(word_list), 0, 0)
       for word_list in words], tokenizer, 64)
  model = trained_tagger(tmp_path, flag_values)
  probabilities, _ = word_values(
      features, model({name: features[name] for name in (
          "input_ids", "input_mask", "segment_ids")})["probabilities"],
      features["label_ids"])
  predicted = iter(zip(probabilities.max(axis=-1),
                       np.argmax(probabilities, axis=-1)))
  for row, (text, word_list) in enumerate(zip(texts, words)):
    count = len(word_list)
    spans = list(zip(served["word_start"][row][:count],
                     served["word_end"][row][:count]))
    assert served["words"][row][:count] == [text[start:end]
                                            for start, end in spans]
    assert [tokenizer.basic_tokenizer.tokenize(text[start:end])
            for start, end in spans] == [[word] for word in word_list]
    tags = served["tags"][row][:count]
    expected = [next(predicted) for _ in word_list]
    assert tags == [conll.LABELS[index] for _, index in expected], text
    np.testing.assert_allclose(served["tag_probability"][row][:count],
                               [probability for probability, _ in expected],
                               atol=1e-5)
    assert set(served["tags"][row][count:]) <= {""}
    entities = [(kind, served["word_start"][row][first],
                 served["word_end"][row][last])
                for kind, first, last in get_entities(tags)]
    found = len(entities)
    assert list(zip(served["entity_type"][row][:found],
                    served["entity_start"][row][:found],
                    served["entity_end"][row][:found])) == entities
    assert served["entity_text"][row][:found] == [
        text[start:end] for _, start, end in entities]
    assert set(served["entity_type"][row][found:]) <= {""}
  assert sum(map(len, served["entity_type"])) > 20
  assert spans[:3] == [(0, 4), (6, 8), (9, 13)]  # U+00A0 separates words


@pytest.mark.rerun
def test_a_killed_run_resumes_with_the_batches_it_had_not_seen(ner_run,
                                                               tmp_path):
  """SIGKILL after a checkpoint; the same command finishes with the
  weights of the unbroken run (same --seed, no dropout)."""
  straight_path, flag_values = ner_run
  output_dir = tmp_path / "killed"
  flag_values = {**flag_values, "output_dir": output_dir,
                 "export_dir": tmp_path / "export"}
  kill_after_checkpoint("run_ner.py", flag_values, 40)
  killed_at = int(tf.train.latest_checkpoint(str(output_dir)).split("-")[-1])
  assert killed_at < 191, "the run ended before it could be killed"
  resumed = run_ner(flag_values)
  assert f"Training from step {killed_at} to 191" in resumed.stderr
  assert_checkpoints_close(str(output_dir / "model.ckpt-191"),
                           str(straight_path / "output" / "model.ckpt-191"),
                           atol=1e-5)


@pytest.fixture(scope="module")
def feature_based_run(tmp_path_factory):
  """A BiLSTM on the last four layers of a frozen random 4-layer encoder
  (loaded from --init_checkpoint)."""
  tmp_path = tmp_path_factory.mktemp("ner_features")
  write_corpus(tmp_path / "data")
  flag_values = common_flags(tmp_path, num_hidden_layers=4)
  # A random encoder's features vary from draw to draw (entity F1 0.92 to
  # 0.97 over four seeds with these settings): one fixed draw.
  keras.utils.set_random_seed(1)
  encoder = bert_tf.models.BertEncoder(bert_tf.BertConfig.from_json_file(
      str(flag_values["bert_config_file"])))
  bert_tf.save_checkpoint(encoder, str(tmp_path / "encoder.ckpt"))
  run_ner({**flag_values, "output_dir": tmp_path / "output",
           "do_train": True, "do_eval": True,
           "init_checkpoint": tmp_path / "encoder.ckpt",
           "feature_based": "concat_last_four", "lstm_units": 32,
           "learning_rate": 2e-3, "num_train_epochs": 14,
           "export_dir": tmp_path / "export"})
  return tmp_path


def test_feature_based_learns_on_the_frozen_encoder(feature_based_run):
  tmp_path = feature_based_run
  results = read_results(tmp_path / "output" / "eval_results.txt")
  assert float(results["eval_f1"]) >= 0.9, results
  ours = tf.train.load_checkpoint(tf.train.latest_checkpoint(
      str(tmp_path / "output")))
  init = tf.train.load_checkpoint(str(tmp_path / "encoder.ckpt"))
  encoder_names = [name for name in init.get_variable_to_shape_map()
                   if name.startswith("bert/")]
  assert len(encoder_names) == 5 + 16 * 4 + 2
  for name in encoder_names:
    np.testing.assert_array_equal(ours.get_tensor(name),
                                  init.get_tensor(name), err_msg=name)
  shapes = ours.get_variable_to_shape_map()
  assert not any(name.startswith("bert/") and name.endswith("/adam_m")
                 for name in shapes)
  assert shapes["ner/bilstm_0/fw/kernel"] == [4 * 32, 4 * 32]
  assert shapes["ner/bilstm_1/bw/recurrent_kernel"] == [32, 4 * 32]
  assert shapes["ner/output_weights"] == [9, 64]
  assert "ner/bilstm_1/bw/kernel/adam_m" in shapes


def test_the_feature_based_export_tags_as_its_checkpoint(feature_based_run):
  """The BiLSTM tagger's export, from ids and from raw text: the tags of
  the run's last checkpoint (each text tagged alone, as
  --nodocument_context tags a sentence)."""
  tmp_path = feature_based_run
  sentences = conll.read_conll(str(tmp_path / "data" / "eng.testa"))[:20]
  features = tagging_features.convert_sentences(
      sentences, tokenization.FullTokenizer(DEMO_VOCAB, True), 64)
  inputs = {name: features[name] for name in
            ("input_ids", "input_mask", "segment_ids")}
  _, outputs = serve_export(tmp_path / "export" / "1", {
      "serving_default": inputs,
      "serve_text": {"text": [" ".join(sentence.words)
                              for sentence in sentences]}}, tmp_path)
  config = bert_tf.BertConfig.from_json_file(
      str(tmp_path / "bert_config_4.json"))
  model = bert_tf.models.BertFeatureTagger(
      config, 9, *layer_combination.feature_layers("concat_last_four", 4),
      lstm_units=32)
  bert_tf.load_checkpoint(model, tf.train.latest_checkpoint(
      str(tmp_path / "output")))
  expected = model(inputs)["probabilities"]
  np.testing.assert_allclose(outputs["serving_default"]["probabilities"],
                             expected, atol=1e-5)
  probabilities, _ = word_values(
      features, expected.numpy(), features["label_ids"])
  tags = iter(conll.LABELS[index] for index in
              np.argmax(probabilities, axis=-1))
  for row, sentence in enumerate(sentences):
    assert outputs["serve_text"]["tags"][row][:len(sentence.words)] == [
        next(tags) for _ in sentence.words]


# Refused before any work, in one line: Python's checks, the same on every
# TensorFlow; one leg of CI runs it.
@pytest.mark.rerun
def test_bad_input_stops_before_anything_is_written(tmp_path):
  write_corpus(tmp_path / "data")
  bad = {
      "columns": "-DOCSTART- -X- -X- O\n\nEU NNP I-NP I-ORG\nrejects VBZ O\n",
      "tag": "EU NNP I-NP I-ORG\ncall NN I-NP I-FOO\n",
      "empty": "-DOCSTART- -X- -X- O\n\n",
  }
  for name, text in bad.items():
    (tmp_path / name).mkdir()
    for split in ("eng.train", "eng.testa", "eng.testb"):
      (tmp_path / name / split).write_text(
          text if split == "eng.testa" else
          (tmp_path / "data" / split).read_text())
  flag_values = common_flags(tmp_path, do_train=True, do_eval=True)
  cases = {
      r"columns/eng.testa:4: expected 4 columns \(word, POS, chunk, NER "
      r"tag\), found 3": {"data_dir": tmp_path / "columns"},
      r"tag/eng.testa:2: unknown NER tag 'I-FOO'": {
          "data_dir": tmp_path / "tag"},
      r"empty/eng.testa: no sentences": {"data_dir": tmp_path / "empty"},
      r"--data_dir=.*missing/eng.train does not exist": {
          "data_dir": tmp_path / "missing"},
      r"--feature_based=concat_last_four: layer -3 does not exist in a "
      r"model of 2 layers": {"feature_based": "concat_last_four"},
      r"--lstm_units is the feature-based BiLSTM's size": {"lstm_units": 16},
      # checked before the work, not [Errno 17] after it
      r"--export_dir=.*dev_predictions.txt is where --output_dir writes "
      r".*dev_predictions.txt": {
          "output_dir": tmp_path / "output6",
          "export_dir": tmp_path / "output6" / "dev_predictions.txt"},
      r"--lora_rank: --feature_based reads features from a frozen encoder, "
      r"where adapters would not train": {"feature_based": "last_hidden",
                                          "lora_rank": 2},
  }
  assert_cases_fail_before_writing("run_ner.py", flag_values, cases, tmp_path)


# absl's flag listing: the same on every TensorFlow; one leg of CI runs it.
@pytest.mark.rerun
def test_help_lists_the_flags():
  assert_help_lists("run_ner.py", FINE_TUNING_FLAGS + (
      "data_dir", "document_context", "feature_based", "lstm_units"))
