"""What every export's raw-text signatures share (tasks/serving.py), run
through the signatures of the tasks that answer in character offsets."""

import pytest
import tensorflow as tf

from bert_tf.models import BertSpanLabeler, BertTagger
from bert_tf.tasks.ner import examples as conll
from bert_tf.tasks.ner.serving import ner_serving
from bert_tf.tasks.squad import answers as squad_answers
from bert_tf.tasks.squad.serving import squad_serving
from bert_tf.text import InGraphTokenizer
from tests.support.helpers import tiny_config
from tests.support.squad_fixtures import DEMO_VOCAB


@pytest.fixture(scope="module")
def offset_signatures():
  """serve_text of an untrained SQuAD model and NER tagger."""
  config = tiny_config(vocab_size=len(open(DEMO_VOCAB,
                                           encoding="utf-8").readlines()))
  tokenizer = InGraphTokenizer(DEMO_VOCAB, True)
  _, squad = squad_serving(BertSpanLabeler(config), tokenizer, 32, 8, 8,
                           squad_answers.AnswerOptions())
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
