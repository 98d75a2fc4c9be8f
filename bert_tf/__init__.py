"""bert_tf: Google's BERT release on TensorFlow 2 / Keras 3, same files, same numbers.

The public names load on first use, so that tools which need no TensorFlow
(create_pretraining_data, the tokenizer) start without importing it.
"""

import importlib

__version__ = "0.1.0"

# Public name -> module defining it.
_EXPORTS = {
    "BertClassifier": "bert_tf.models",
    "BertConfig": "bert_tf.config",
    "BertEncoder": "bert_tf.models",
    "BertPretrainer": "bert_tf.models",
    "LoadReport": "bert_tf.checkpoints",
    "checkpoint_variables": "bert_tf.checkpoints",
    "load_checkpoint": "bert_tf.checkpoints",
    "save_checkpoint": "bert_tf.checkpoints",
    "masked_lm_loss": "bert_tf.losses",
    "next_sentence_loss": "bert_tf.losses",
    "pretraining_loss": "bert_tf.losses",
    "PretrainedModel": "bert_tf.pretrained",
    "load_pretrained": "bert_tf.pretrained",
}
_SUBMODULES = ("checkpoints", "config", "conversion", "data", "features",
               "files", "huggingface", "layers", "losses", "models",
               "pretrained", "pretraining", "tasks", "text", "tokenization",
               "training", "vocabulary")

__all__ = sorted(_EXPORTS) + list(_SUBMODULES)


def __getattr__(name):
  if name in _EXPORTS:
    return getattr(importlib.import_module(_EXPORTS[name]), name)
  if name in _SUBMODULES:
    return importlib.import_module(f"bert_tf.{name}")
  raise AttributeError(f"module 'bert_tf' has no attribute {name!r}")


def __dir__():
  return __all__
