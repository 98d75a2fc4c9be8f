"""In-graph (TensorFlow ops) tokenisation and input packing for SavedModels,
the Keras preprocessors, and each task kind's rules for raw text (squad/,
ner/, swag/).

bert_tf.text.InGraphTokenizer, pack_inputs and truncated_pair_lengths are
imported when first used: importing the package imports no TensorFlow, so
that a program checks its flags with the TensorFlow-free modules first."""

import importlib

_EXPORTS = {"InGraphTokenizer": "bert_tf.text.tokenizer",
            "pack_inputs": "bert_tf.text.packing",
            "truncated_pair_lengths": "bert_tf.text.packing"}


def __getattr__(name):
  if name in _EXPORTS:
    return getattr(importlib.import_module(_EXPORTS[name]), name)
  raise AttributeError(f"module 'bert_tf.text' has no attribute {name!r}")
