"""run_classifier's export: class probabilities and label names from ids
or raw text (one text, or a pair)."""

import tensorflow as tf

from bert_tf.tasks.serving import IdsServing, checked_texts, ids_signatures
from bert_tf.text.packing import packed_texts


class ClassifierServing(IdsServing):
  """A classifier, its in-graph tokenizer and its label names, for export.

  serving_default(input_ids, input_mask, segment_ids: int32 [batch, seq])
      -> probabilities [batch, classes] (predictions [batch] for a
      regressor); ids outside the model's tables are refused
      (serving.checked_ids). Core TensorFlow ops only: stock TF
      Serving runs it.
  serve_text(text_a[, text_b]: string [batch])
      -> the same plus labels (label names; none for a regressor). The text
      is tokenised in the graph exactly as FullTokenizer does and packed as
      training packs it (text_inputs.encode_texts); this uses
      tensorflow-text's ops. The vocabulary travels inside the SavedModel.
  """

  def __init__(self, model, tokenizer, max_seq_length, label_names):
    super().__init__(model, ("predictions",) if model.is_regression
                     else ("probabilities",))
    self.tokenizer = tokenizer
    self.max_seq_length = max_seq_length
    self.label_names = tf.constant(label_names) if label_names else None

  def predict_text(self, text_a, text_b=None):
    outputs = self.predict(packed_texts(self.tokenizer, self.max_seq_length,
                                        text_a, text_b))
    if self.label_names is not None:
      outputs["labels"] = tf.gather(
          self.label_names, tf.argmax(outputs["probabilities"], axis=-1))
    return outputs


def classifier_serving(model, tokenizer, max_seq_length, label_names=None,
                       text_pairs=False):
  """(ClassifierServing, its signatures) for export.write_saved_model.

  Args:
    model: a BertClassifier.
    tokenizer: the InGraphTokenizer of the model's vocabulary; None for
      serving_default alone.
    max_seq_length: the sequence length serve_text packs to.
    label_names: the class names in label order (None for a regressor).
    text_pairs: whether serve_text takes text_b as well as text_a.
  """
  serving = ClassifierServing(model, tokenizer, max_seq_length,
                              list(label_names) if label_names else None)
  signatures = ids_signatures(serving)
  if tokenizer is None:
    return serving, signatures
  text_spec = tf.TensorSpec([None], tf.string)
  if text_pairs:
    @tf.function(input_signature=[text_spec] * 2)
    def serve_text(text_a, text_b):
      return serving.predict_text(**checked_texts(
          {"text_a": text_a, "text_b": text_b}))
  else:
    @tf.function(input_signature=[text_spec])
    def serve_text(text_a):
      return serving.predict_text(**checked_texts({"text_a": text_a}))
  signatures["serve_text"] = serve_text
  return serving, signatures
