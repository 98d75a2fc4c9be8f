"""SavedModel export for TF Serving, with a raw-text signature.

export_classifier writes <export_dir>/<version>/, the layout TF Serving
watches (versions are integers; each export takes the next one), with two
signatures:

  serving_default(input_ids, input_mask, segment_ids: int32 [batch, seq])
      -> probabilities [batch, classes] (predictions [batch] for a
      regressor). Core TensorFlow ops only: stock TF Serving runs it.
  serve_text(text_a[, text_b]: string [batch])
      -> the same plus labels (label names; none for a regressor). The text
      is tokenised in the graph exactly as FullTokenizer does and packed as
      run_classifier packs it; this uses tensorflow-text's ops.

The vocabulary travels inside the SavedModel. The export is written under a
held temporary name (<version>.tmp-<hex>, which TF Serving ignores) and
renamed into place when complete.
"""

import logging

import tensorflow as tf

from bert_tf import file_io
from bert_tf.text.packing import pack_inputs
from bert_tf.text.tokenizer import InGraphTokenizer

logger = logging.getLogger(__name__)

_INPUT_NAMES = ("input_ids", "input_mask", "segment_ids")


class _ClassifierServing(tf.Module):
  """The model, tokenizer and label names that the signatures close over."""

  def __init__(self, model, tokenizer, max_seq_length, label_names):
    super().__init__()
    self.model = model
    self.tokenizer = tokenizer
    self.max_seq_length = max_seq_length
    self.cls_id = tokenizer.vocab["[CLS]"]
    self.sep_id = tokenizer.vocab["[SEP]"]
    self.label_names = (tf.constant(label_names) if label_names else None)

  def predict(self, inputs):
    outputs = self.model({name: inputs[name] for name in _INPUT_NAMES},
                         training=False)
    if "predictions" in outputs:
      return {"predictions": outputs["predictions"]}
    return {"probabilities": outputs["probabilities"]}

  def predict_text(self, text_a, text_b=None):
    ids_b = None if text_b is None else self.tokenizer(text_b)
    inputs = pack_inputs(self.tokenizer(text_a), self.max_seq_length,
                         self.cls_id, self.sep_id, ids_b)
    outputs = self.predict(inputs)
    if self.label_names is not None:
      outputs["labels"] = tf.gather(
          self.label_names, tf.argmax(outputs["probabilities"], axis=-1))
    return outputs


def export_classifier(model, export_dir, vocab_file, do_lower_case,
                      max_seq_length, label_names=None, text_pairs=False):
  """Exports a BertClassifier for TF Serving.

  Args:
    model: a BertClassifier.
    export_dir: the model's base directory; a numbered version goes inside.
    vocab_file, do_lower_case: the tokenizer the model was trained with.
    max_seq_length: the sequence length serve_text packs to.
    label_names: the class names in label order (None for a regressor).
    text_pairs: whether serve_text takes text_b as well as text_a.

  Returns:
    The path of the version directory written.
  """
  serving = _ClassifierServing(
      model, InGraphTokenizer(vocab_file, do_lower_case), max_seq_length,
      list(label_names) if label_names else None)
  id_spec = tf.TensorSpec([None, None], tf.int32)
  text_spec = tf.TensorSpec([None], tf.string)

  @tf.function(input_signature=[id_spec] * 3)
  def serving_default(input_ids, input_mask, segment_ids):
    return serving.predict({"input_ids": input_ids, "input_mask": input_mask,
                            "segment_ids": segment_ids})

  if text_pairs:
    @tf.function(input_signature=[text_spec] * 2)
    def serve_text(text_a, text_b):
      return serving.predict_text(text_a, text_b)
  else:
    @tf.function(input_signature=[text_spec])
    def serve_text(text_a):
      return serving.predict_text(text_a)

  file_io.makedirs(export_dir)
  file_io.remove_stale_temporaries(export_dir, r"\d+")
  version = _next_version(export_dir)
  final = f"{export_dir.rstrip('/')}/{version}"
  with file_io.held_temporary(final, directory=True) as temporary:
    tf.saved_model.save(serving, temporary, signatures={
        "serving_default": serving_default, "serve_text": serve_text})
    file_io.rename(temporary, final)
  logger.info("Exported the SavedModel to %s", final)
  return final


def _next_version(export_dir):
  """One more than the largest numbered version already there (1 if none)."""
  versions = [int(name) for name in tf.io.gfile.listdir(export_dir)
              if name.strip("/").isdigit()]
  return max(versions, default=0) + 1
