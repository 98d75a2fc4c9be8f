"""run_ner's export: text -> words, a tag per word, and the entities, as
text.ner.tagging tags them (BertTagger's raw-text path too)."""

import tensorflow as tf

from bert_tf.tasks.ner import examples as conll
from bert_tf.tasks.serving import IdsServing, checked_texts, ids_signatures
from bert_tf.text.ner.tagging import tag_texts


class NerServing(IdsServing):
  """A tagger and its tokenizer, for export.

  serving_default(input_ids, input_mask, segment_ids) -> probabilities
      [batch, seq, 9] (IdsServing).
  serve_text(text: string [batch]) -> each text's words, padded with ""
      ([batch, most words]): words, word_start, word_end (character
      offsets into the text as sent, end exclusive; -1 as padding), tags
      (IOB2, conll.LABELS) and tag_probability (the model's probability of
      each tag); and its entities, padded likewise:
      entity_type (PER, LOC, ORG, MISC), entity_text, entity_start,
      entity_end (tagging.tag_texts).
  """

  def __init__(self, model, tokenizer, max_seq_length):
    super().__init__(model, ("probabilities",))
    self.tokenizer = tokenizer
    self.max_seq_length = max_seq_length

  def tag(self, text):
    text = checked_texts({"text": text}, offsets=True)["text"]
    return tag_texts(self.model, self.tokenizer, self.max_seq_length,
                     conll.LABELS, text)


def ner_serving(model, tokenizer, max_seq_length):
  """(NerServing, its signatures) for export.write_saved_model; without a
  tokenizer, serving_default alone."""
  serving = NerServing(model, tokenizer, max_seq_length)
  signatures = ids_signatures(serving)
  if tokenizer is not None:
    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def serve_text(text):
      return serving.tag(text)

    signatures["serve_text"] = serve_text
  return serving, signatures
