"""run_squad's export: question + context -> the answer, in the graph.

serve_text answers as BertSpanLabeler.predict does, with the same code
(bert_tf.text.squad.answering): run_squad's windows, its span choice and
predictions.json's text. Every step is linear in the context's length (the
windows' max-context flags compare each window with its neighbours only),
and a context longer than the export's max_context_length characters is
refused before any of them, so that one request cannot hold a server for
long.
"""

import tensorflow as tf

from bert_tf.tasks.serving import IdsServing, checked_texts, ids_signatures
from bert_tf.text.squad.answering import WindowLengths, answer_questions

# run_squad's --max_serving_context_length: 2.5 times the longest context
# of SQuAD v1.1's dev set; at BERT-Base's 384 / 128, 18 windows of English
# and at most 77 (docs/squad.md#serving-long-contexts).
MAX_SERVING_CONTEXT_LENGTH = 10_000


class SquadServing(IdsServing):
  """A span model, its tokenizer and run_squad's settings, for export.

  serving_default(input_ids, input_mask, segment_ids) -> start_logits,
      end_logits (IdsServing).
  serve_text(question, context: string [batch]) -> answer (string),
      answer_start, answer_end (int64 character offsets into the context
      as sent, end exclusive; -1 when there is no answer), score (the
      answer's start + end logit); for a v2.0 model also null_odds (null
      score - score, the original's null_odds.json) and has_answer
      (null_odds <= null_score_diff_threshold; else the answer is "").
      A context of more than max_context_length characters fails the
      request with an InvalidArgumentError.
  """

  def __init__(self, model, tokenizer, max_seq_length, doc_stride,
               max_query_length, answer_options, max_context_length):
    super().__init__(model, ("start_logits", "end_logits"))
    self.tokenizer = tokenizer
    self.max_seq_length = max_seq_length
    self.doc_stride = doc_stride
    self.max_query_length = max_query_length
    self.options = answer_options
    self.max_context_length = max_context_length

  def answer(self, question, context):
    texts = checked_texts({"question": question, "context": context},
                          offsets=True)
    return answer_questions(
        lambda inputs: self.model(inputs, training=False), self.tokenizer,
        texts["question"],
        _checked_length(texts["context"], self.max_context_length),
        WindowLengths(self.max_seq_length, self.doc_stride,
                      self.max_query_length), self.options)


def squad_serving(model, tokenizer, max_seq_length, doc_stride,
                  max_query_length, answer_options,
                  max_context_length=MAX_SERVING_CONTEXT_LENGTH):
  """(SquadServing, its signatures) for export.write_saved_model; without
  a tokenizer, serving_default alone."""
  serving = SquadServing(model, tokenizer, max_seq_length, doc_stride,
                         max_query_length, answer_options,
                         max_context_length)
  signatures = ids_signatures(serving)
  if tokenizer is not None:
    text_spec = tf.TensorSpec([None], tf.string)

    @tf.function(input_signature=[text_spec] * 2)
    def serve_text(question, context):
      return serving.answer(question, context)

    signatures["serve_text"] = serve_text
  return serving, signatures


def _checked_length(context, max_context_length):
  """context, once every row is checked to have at most max_context_length
  characters: running it fails the request with an InvalidArgumentError
  naming the longest row, before the context is tokenised."""
  lengths = tf.strings.length(context, unit="UTF8_CHAR")
  # One length more, so that an empty batch has a longest row to name.
  longest = tf.argmax(tf.concat([lengths, [0]], 0), output_type=tf.int64)
  check = tf.debugging.Assert(
      tf.reduce_all(lengths <= max_context_length), [tf.strings.format(
          "context: row {} has {} characters; this export answers at most "
          f"{max_context_length} (run_squad "
          "--max_serving_context_length)",
          (longest, tf.concat([lengths, [0]], 0)[longest]))])
  with tf.control_dependencies([check]):
    return tf.identity(context)
