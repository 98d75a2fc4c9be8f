"""The CoNLL-2003 reader: the real files whole, tag schemes, bad lines."""

import os

import pytest
from hypothesis import given, strategies as st
from seqeval.metrics.sequence_labeling import get_entities

from bert_tf.tasks.ner import examples as conll
from tests.support.helpers import SHARED_DIR

CONLL_DIR = os.path.join(SHARED_DIR, "data", "conll2003")


@pytest.mark.shared
@pytest.mark.parametrize(
    "name,documents,sentences,tokens,entities,first_words,first_tags", [
        ("eng.train", 946, 14041, 203621, 23499, "EU rejects German",
         "I-ORG O I-MISC"),
        ("eng.testa", 216, 3250, 51362, 5942, "CRICKET - LEICESTERSHIRE",
         "O O I-ORG"),
        ("eng.testb", 231, 3453, 46435, 5648, "SOCCER - JAPAN",
         "O O I-LOC")])
def test_the_real_files_are_read_whole(name, documents, sentences, tokens,
                                       entities, first_words, first_tags):
  read = conll.read_conll(os.path.join(CONLL_DIR, name))
  assert conll.count_documents(read) == documents
  assert len(read) == sentences
  assert sum(len(sentence.words) for sentence in read) == tokens
  assert sum(len(get_entities(sentence.tags)) for sentence in read) == \
      entities
  assert conll.detect_scheme(read) == conll.IOB1
  first = read[0]
  assert first.words[:3] == first_words.split()
  assert first.tags[:3] == first_tags.split()
  assert (first.document, read[-1].document) == (0, documents - 1)


def write(tmp_path, text, name="eng.train"):
  path = tmp_path / name
  path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
  return str(path)


def test_documents_sentences_and_lines(tmp_path):
  path = write(tmp_path, "-DOCSTART- -X- -X- O\n\nA NN I-NP I-PER\n\n\n"
                         "b NN I-NP O\nc NN I-NP I-LOC\n-DOCSTART- -X- -X- O\n"
                         "\nd NN I-NP B-LOC\n")
  sentences = conll.read_conll(path)
  assert [(s.words, s.tags, s.document, s.line) for s in sentences] == [
      (["A"], ["I-PER"], 0, 3), (["b", "c"], ["O", "I-LOC"], 0, 6),
      (["d"], ["B-LOC"], 1, 10)]


def test_a_byte_order_mark_is_not_a_word(tmp_path):
  """A file saved with a UTF-8 BOM: its -DOCSTART- still starts a document,
  and no word carries the mark."""
  text = "-DOCSTART- -X- -X- O\n\nA NN I-NP I-PER\n\nb NN I-NP O\n"
  plain = conll.read_conll(write(tmp_path, text))
  marked = conll.read_conll(write(tmp_path, "\ufeff" + text, "bom.train"))
  assert [(s.words, s.tags, s.document, s.line) for s in marked] == \
      [(s.words, s.tags, s.document, s.line) for s in plain] == [
          (["A"], ["I-PER"], 0, 3), (["b"], ["O"], 0, 5)]


@pytest.mark.parametrize("text,expected", [
    ("a NN I-NP O\nb NN O\n", r"eng.train:2: expected 4 columns \(word, POS, "
                              r"chunk, NER tag\), found 3: 'b NN O'"),
    ("a NN I-NP O\n\nb NN I-NP I-DATE\n",
     r"eng.train:3: unknown NER tag 'I-DATE'; expected one of O, B-PER"),
    (b"a NN I-NP O\n\xe9 NN I-NP O\n", r"eng.train:2: not UTF-8 text"),
])
def test_a_bad_line_is_named(tmp_path, text, expected):
  with pytest.raises(ValueError, match=expected):
    conll.read_conll(write(tmp_path, text))


def test_a_missing_file_names_the_flag(tmp_path):
  with pytest.raises(ValueError, match=r"--data_dir=.*eng.testa does not "
                     r"exist"):
    conll.read_conll(str(tmp_path / "eng.testa"))


def test_schemes():
  iob1 = ["I-PER", "I-PER", "B-PER", "O", "I-LOC", "I-ORG", "B-ORG"]
  iob2 = ["B-PER", "I-PER", "B-PER", "O", "B-LOC", "B-ORG", "B-ORG"]
  assert conll.to_iob2(iob1) == iob2
  assert conll.from_iob2(iob2, conll.IOB1) == iob1
  assert conll.from_iob2(iob2, conll.IOB2) == iob2
  sentence = lambda tags: conll.Sentence(["w"] * len(tags), tags, 0, 1)
  assert conll.detect_scheme([sentence(iob1)]) == conll.IOB1
  assert conll.detect_scheme([sentence(iob2)]) == conll.IOB2
  assert conll.detect_scheme([sentence(["O"])]) == conll.IOB2


@given(st.lists(st.sampled_from(conll.LABELS), max_size=12))
def test_scheme_conversions_keep_conllevals_entities(tags):
  """Any tags, ill-formed ones too (a model's predictions), convert
  without changing the entities conlleval reads."""
  entities = get_entities(tags)
  assert get_entities(conll.to_iob2(tags)) == entities
  for scheme in (conll.IOB1, conll.IOB2):
    assert get_entities(conll.from_iob2(conll.to_iob2(tags), scheme)) == \
        entities
