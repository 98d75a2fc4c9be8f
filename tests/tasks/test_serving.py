"""What every export shares (tasks/serving.py): each weight saved once, an
empty batch answered with empty outputs, and the raw-text signatures'
checks, run through the signatures of the tasks that answer in character
offsets."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.extraction.embeddings import embedding_serving
from bert_tf.extraction.serving import feature_serving
from bert_tf.files import export
from bert_tf.models import (BertClassifier, BertEmbedder,
                            BertMultipleChoice, BertSpanLabeler, BertTagger)
from bert_tf.models.layer_outputs import LayerOutputs
from bert_tf.tasks.glue.serving import classifier_serving
from bert_tf.tasks.ner import examples as conll
from bert_tf.tasks.ner.serving import ner_serving
from bert_tf.tasks.squad.serving import squad_serving
from bert_tf.tasks.swag.serving import swag_serving
from bert_tf.text.tokenizer import InGraphTokenizer
from bert_tf.text.squad.answer_options import AnswerOptions
from tests.support.helpers import tiny_config
from tests.support.squad_fixtures import DEMO_VOCAB


@pytest.fixture(scope="module")
def offset_signatures():
  """serve_text of an untrained SQuAD model and NER tagger."""
  config = tiny_config(vocab_size=len(open(DEMO_VOCAB,
                                           encoding="utf-8").readlines()))
  tokenizer = InGraphTokenizer(DEMO_VOCAB, True)
  _, squad = squad_serving(BertSpanLabeler(config), tokenizer, 32, 8, 8,
                           AnswerOptions())
  _, ner = ner_serving(BertTagger(config, len(conll.LABELS)), tokenizer, 32)
  return {"squad": squad["serve_text"], "ner": ner["serve_text"]}


@pytest.mark.parametrize("signature, inputs, field", [
    ("squad", {"question": b"what ?", "context": b"caf\xe9 red"}, "context"),
    ("squad", {"question": b"wh\xffat", "context": b"a red car"}, "question"),
    ("ner", {"text": b"Paris caf\xe9"}, "text"),
])
def test_text_that_is_not_utf8_is_refused_by_name(offset_signatures,
                                                  signature, inputs, field):
  """Offsets need valid UTF-8: the request is refused naming the field,
  in a message a client can decode (none of the request's bytes in it)."""
  with pytest.raises(tf.errors.InvalidArgumentError) as refusal:
    offset_signatures[signature](**{name: tf.constant([value])
                                    for name, value in inputs.items()})
  assert f"{field}: not valid UTF-8" in refusal.value.message
  refusal.value.message.encode("ascii")  # no byte of the text in it


EVERY_EXPORT = {
    "glue": lambda config, tokenizer: classifier_serving(
        BertClassifier(config, 3), tokenizer, 32, ["a", "b", "c"]),
    "squad": lambda config, tokenizer: squad_serving(
        BertSpanLabeler(config), tokenizer, 32, 8, 8,
        AnswerOptions()),
    "ner": lambda config, tokenizer: ner_serving(
        BertTagger(config, len(conll.LABELS)), tokenizer, 32),
    "swag": lambda config, tokenizer: swag_serving(
        BertMultipleChoice(config), tokenizer, 32),
    "features": lambda config, tokenizer: feature_serving(
        LayerOutputs(config, [-1, -2]), tokenizer, 32),
    "embeddings": lambda config, tokenizer: embedding_serving(
        BertEmbedder(config, dense=[{"units": 24}]), tokenizer, 32),
}


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
  """{task: (its serving module, its version directory)}, each written
  once."""
  config = tiny_config(vocab_size=len(open(DEMO_VOCAB,
                                           encoding="utf-8").readlines()))
  tokenizer = InGraphTokenizer(DEMO_VOCAB, True)
  written = {}
  for task, make in EVERY_EXPORT.items():
    serving, signatures = make(config, tokenizer)
    version_dir = export.write_saved_model(
        serving, str(tmp_path_factory.mktemp(task)), signatures)
    written[task] = (serving, version_dir)
  return written


@pytest.mark.parametrize("task", sorted(EVERY_EXPORT))
def test_an_export_holds_each_weight_once(task, exports):
  """The saved variables are the model's weights, each once: the bytes
  saved equal the model's parameter bytes (an export once held each weight
  twice, under the Keras model and under its TensorFlow variables)."""
  serving, version_dir = exports[task]
  reader = tf.train.load_checkpoint(f"{version_dir}/variables/variables")
  saved = [reader.get_tensor(name)
           for name in reader.get_variable_to_shape_map()
           if name != "_CHECKPOINTABLE_OBJECT_GRAPH"]
  weights = serving.model.weights
  assert len(saved) == len(weights)
  assert sum(array.nbytes for array in saved) == sum(
      np.asarray(weight).nbytes for weight in weights)


def empty_batch(function):
  """Inputs of no rows for a loaded signature (8 positions where the
  length is free)."""
  return {name: tf.zeros([0] + [8 if size is None else size
                                for size in spec.shape[1:]], spec.dtype)
          for name, spec in function.structured_input_signature[1].items()}


@pytest.mark.parametrize("task", sorted(EVERY_EXPORT))
def test_an_empty_batch_gets_empty_outputs(task, exports):
  """Every signature of every export answers an empty batch as encode([])
  does: each output with no rows, of its dtype, rank and fixed sizes
  (probabilities [0, classes], embedding [0, dim], ...)."""
  loaded = tf.saved_model.load(exports[task][1])
  for name, function in loaded.signatures.items():
    outputs = function(**empty_batch(function))
    specs = function.structured_outputs
    assert sorted(outputs) == sorted(specs), name
    for output, value in outputs.items():
      spec = specs[output]
      assert value.dtype == spec.dtype, (name, output)
      assert value.shape[0] == 0 and spec.shape[1:].is_compatible_with(
          value.shape[1:]), (name, output, value.shape)


def test_an_ids_request_of_no_positions_is_refused(exports):
  """The pooler reads the first position: [batch, 0] ids are refused
  naming input_ids."""
  loaded = tf.saved_model.load(exports["glue"][1])
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match="input_ids: sequences must have at least one "
                           "position"):
    loaded.signatures["serving_default"](
        **{name: tf.zeros([2, 0], tf.int32) for name in
           ("input_ids", "input_mask", "segment_ids")})
