"""run_swag's export: a context and its four endings -> the choice.

serve_text packs `[CLS] context [SEP] ending [SEP]` for each ending as
run_swag packs `sent1` and `sent2 ending` (swag.features), in the graph,
as BertMultipleChoice's preprocessor does (text.swag.packing), and returns
the model's softmax over the four.
"""

import tensorflow as tf

from bert_tf.tasks.serving import IdsServing, checked_texts, ids_signatures
from bert_tf.tasks.swag.examples import NUM_CHOICES
from bert_tf.text.swag.packing import packed_choices


class SwagServing(IdsServing):
  """A multiple-choice model and its tokenizer, for export.

  serving_default(input_ids, input_mask, segment_ids: int32 [batch, 4,
      seq]) -> probabilities [batch, 4] (IdsServing).
  serve_text(context: string [batch], endings: string [batch, 4]) ->
      probabilities [batch, 4] and choice (int64 [batch], the likeliest
      ending's index). An ending is the whole continuation: swagaf's
      sent2 and ending, joined by a space, as run_swag joins them.
  """

  def __init__(self, model, tokenizer, max_seq_length):
    super().__init__(model, ("probabilities",))
    self.tokenizer = tokenizer
    self.max_seq_length = max_seq_length

  def choose(self, context, endings):
    texts = checked_texts({"context": context, "endings": endings},
                          shapes={"endings": ("batch", NUM_CHOICES)})
    probabilities = self.predict(packed_choices(
        self.tokenizer, self.max_seq_length, texts["context"],
        texts["endings"]))["probabilities"]
    return {"probabilities": probabilities,
            "choice": tf.argmax(probabilities, axis=-1)}


def swag_serving(model, tokenizer, max_seq_length):
  """(SwagServing, its signatures) for export.write_saved_model; without a
  tokenizer, serving_default alone."""
  serving = SwagServing(model, tokenizer, max_seq_length)
  signatures = ids_signatures(serving, (None, NUM_CHOICES, None))
  if tokenizer is not None:
    @tf.function(input_signature=[
        tf.TensorSpec([None], tf.string),
        tf.TensorSpec([None, NUM_CHOICES], tf.string)])
    def serve_text(context, endings):
      return serving.choose(context, endings)

    signatures["serve_text"] = serve_text
  return serving, signatures
