"""extract_features' export: text -> the chosen layers, and a sentence
vector; and TextServing, what the exports of an embedder's outputs
(embeddings, sparse) share.

The layers are the --layers of the export, in that order, as
extract_features writes them (npz's [tokens, layers, hidden]). The sentence
vector is the mean over the real tokens ([CLS] and [SEP] included) of the
mean of the last four layers (all layers of a smaller model): a common
substitute for a sentence embedding, not one the paper proposes (without
fine-tuning, [CLS] is only trained for next-sentence prediction, and no
pooling of a pre-trained BERT was shown to be a good sentence
representation).
"""

import tensorflow as tf

from bert_tf.layers.layer_combination import select_layers
from bert_tf.tasks.serving import (IdsServing, checked_ids, checked_texts,
                                   ids_signatures)
from bert_tf.text.packing import packed_texts

# The sentence vector averages this many last layers.
POOLED_LAYERS = 4


class FeatureServing(IdsServing):
  """A LayerOutputs model and its tokenizer, for export.

  serving_default(input_ids, input_mask, segment_ids: int32 [batch, seq])
      -> layers float32 [batch, seq, layers, hidden], sentence_vector
      [batch, hidden].
  serve_text(text_a) and serve_text_pair(text_a, text_b): string [batch]
      -> the same, with input_mask [batch, seq] and tokens [batch, seq]
      (the word pieces, [CLS] and [SEP] included; "" as padding); seq is
      the batch's longest row, at most max_seq_length.
  """

  def __init__(self, model, tokenizer, max_seq_length):
    super().__init__(model, ())
    self.tokenizer = tokenizer
    self.max_seq_length = max_seq_length
    if tokenizer is not None:
      names = [""] * (max(tokenizer.vocab.values()) + 1)
      for token, index in tokenizer.vocab.items():
        names[index] = token
      self.token_names = tf.constant(names)

  def predict(self, inputs):
    inputs = checked_ids(inputs, self.model.config)
    encoded = self.model.encoder(inputs, training=False)
    layers = [tf.cast(layer, tf.float32) for layer in select_layers(
        encoded, self.model.selected_layers)]
    pooled = encoded["all_encoder_layers"][-POOLED_LAYERS:]
    pooled = tf.add_n([tf.cast(layer, tf.float32) for layer in pooled]) / \
        len(pooled)
    mask = tf.cast(inputs["input_mask"], tf.float32)[:, :, None]
    return {
        "layers": tf.stack(layers, axis=2),
        "sentence_vector": tf.reduce_sum(pooled * mask, axis=1)
                           / tf.maximum(tf.reduce_sum(mask, axis=1), 1.0),
    }

  def predict_text(self, text_a, text_b=None):
    inputs = batch_packed_texts(self.tokenizer, self.max_seq_length, text_a,
                                text_b)
    outputs = self.predict(inputs)
    outputs["input_mask"] = inputs["input_mask"]
    outputs["tokens"] = tf.where(inputs["input_mask"] > 0, tf.gather(
        self.token_names, inputs["input_ids"]), "")
    return outputs


def batch_packed_texts(tokenizer, max_seq_length, text_a, text_b=None):
  """packed_texts cut to the batch's longest row: a batch of short texts
  runs at its own length, not max_seq_length (an empty batch at one
  position)."""
  inputs = packed_texts(tokenizer, max_seq_length, text_a, text_b)
  width = tf.reduce_max(tf.concat(
      [[1], tf.reduce_sum(inputs["input_mask"], axis=1)], 0))
  return {name: value[:, :width] for name, value in inputs.items()}


class TextServing(IdsServing):
  """A model, its tokenizer and the prompt serve_text prefixes, for export
  (text_signatures): serving_default(ids) -> predict(ids), the ids as
  given; serve_text(text) -> predict_text(text), the same of prompt +
  each text tokenised in the graph and cut at max_seq_length."""

  def __init__(self, model, output_names, tokenizer, max_seq_length,
               prompt):
    super().__init__(model, output_names)
    self.tokenizer = tokenizer
    self.max_seq_length = max_seq_length
    self.prompt = prompt

  def packed_text(self, text):
    """The ids of prompt + each text (batch_packed_texts)."""
    return batch_packed_texts(self.tokenizer, self.max_seq_length,
                              tf.strings.join([self.prompt, text]))

  def predict_text(self, text):
    return self.predict(self.packed_text(text))


def text_signatures(serving):
  """serving_default and, where the TextServing has a tokenizer,
  serve_text: its signatures for export.write_saved_model."""
  signatures = ids_signatures(serving)
  if serving.tokenizer is not None:

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def serve_text(text):
      return serving.predict_text(**checked_texts({"text": text}))

    signatures["serve_text"] = serve_text
  return signatures


def feature_serving(model, tokenizer, max_seq_length):
  """(FeatureServing, its signatures) for export.write_saved_model;
  without a tokenizer, serving_default alone."""
  serving = FeatureServing(model, tokenizer, max_seq_length)
  signatures = ids_signatures(serving)
  if tokenizer is not None:
    text_spec = tf.TensorSpec([None], tf.string)

    @tf.function(input_signature=[text_spec])
    def serve_text(text_a):
      return serving.predict_text(**checked_texts({"text_a": text_a}))

    @tf.function(input_signature=[text_spec] * 2)
    def serve_text_pair(text_a, text_b):
      return serving.predict_text(**checked_texts(
          {"text_a": text_a, "text_b": text_b}))

    signatures.update(serve_text=serve_text, serve_text_pair=serve_text_pair)
  return serving, signatures
