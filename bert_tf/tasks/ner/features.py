"""CoNLL sentences -> run_ner's tagging features (text.ner.features): their
tags as IOB2 label ids, their documents as context where asked."""

from bert_tf.tasks.ner import examples as conll
from bert_tf.text.ner.features import convert_words

LABEL_IDS = {label: index for index, label in enumerate(conll.LABELS)}


def convert_sentences(sentences, tokenizer, max_seq_length,
                      document_context=False):
  """Features for every word of `sentences` (conll.Sentence, file order).

  Args:
    sentences: the split's sentences.
    tokenizer: a FullTokenizer.
    max_seq_length: the sequence length, [CLS] and [SEP] included (>= 3).
    document_context: fill sequences from the whole document, not only
      the sentence.
  """
  if max_seq_length < 3:
    raise ValueError(f"--max_seq_length={max_seq_length}: a tagging "
                     f"sequence needs at least 3 positions")
  return convert_words(
      [sentence.words for sentence in sentences],
      [[LABEL_IDS[tag] for tag in conll.to_iob2(sentence.tags)]
       for sentence in sentences],
      tokenizer, max_seq_length,
      [sentence.document for sentence in sentences]
      if document_context else None)
