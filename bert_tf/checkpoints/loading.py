"""Loading any checkpoint or model directory into a bert_tf model: opened
once (model_directory), its weights loaded by name (model_weights)."""

from bert_tf.checkpoints.model_directory import open_model_directory
from bert_tf.checkpoints.model_weights import load_weights


def load_checkpoint(model, location, new_head=False):
  """Loads the weights of any checkpoint or model directory into a bert_tf
  model: a TF1 checkpoint prefix or a directory's newest, a Hugging Face or
  sentence-transformers folder, or a ModelDirectory opened already
  (open_model_directory). A LoadReport; see load_weights."""
  source = open_model_directory(location, needs_vocab=False,
                                needs_config=False)
  return load_weights(model, source.reader, source.path, new_head=new_head,
                      named_labels=source.named_labels)
