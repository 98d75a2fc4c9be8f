"""bert_tf: Google's BERT release on TensorFlow 2 / Keras 3, same files, same numbers.

The public names load on first use, so that tools which need no TensorFlow
(create_pretraining_data, the tokenizer) start without importing it. The
Keras classes register with Keras (bert_tf.keras_objects) once Keras and
TensorFlow are loaded, before or after bert_tf, so that
keras.saving.load_model reads a .keras file after a plain `import bert_tf`.
"""

import importlib
import importlib.abc
import importlib.util
import sys

__version__ = "0.1.0"

# Public name -> module defining it.
_EXPORTS = {
    "AdamWeightDecay": "bert_tf.optimization.optimizers",
    "BertClassifier": "bert_tf.models",
    "BertConfig": "bert_tf.config",
    "BertEmbedder": "bert_tf.models",
    "BertEncoder": "bert_tf.models",
    "BertFeatureTagger": "bert_tf.models",
    "BertMultipleChoice": "bert_tf.models",
    "BertMultipleChoicePreprocessor": "bert_tf.text.swag.preprocessor",
    "BertMaskedLMPreprocessor": "bert_tf.text.masked_lm_preprocessor",
    "BertPreprocessor": "bert_tf.text.preprocessor",
    "BertPretrainer": "bert_tf.models",
    "BertSparseEncoder": "bert_tf.models",
    "BertRoutedSparseEncoder": "bert_tf.models",
    "BertSpanLabeler": "bert_tf.models",
    "BertSpanPreprocessor": "bert_tf.text.squad.preprocessor",
    "BertTagger": "bert_tf.models",
    "BertTaggerPreprocessor": "bert_tf.text.ner.preprocessor",
    "WarmupPolynomialDecay": "bert_tf.optimization.optimizers",
    "create_optimizer": "bert_tf.optimization.optimizers",
    "LoadReport": "bert_tf.checkpoints.model_weights",
    "checkpoint_variables": "bert_tf.checkpoints.model_weights",
    "load_checkpoint": "bert_tf.checkpoints.loading",
    "ModelDirectory": "bert_tf.checkpoints.model_directory",
    "open_model_directory": "bert_tf.checkpoints.model_directory",
    "save_checkpoint": "bert_tf.checkpoints.original.checkpoint_writer",
    "MultipleNegativesRankingLoss": "bert_tf.objectives.embedding",
    "MatryoshkaLoss": "bert_tf.objectives.embedding",
    "SparseMultipleNegativesRankingLoss":
        "bert_tf.objectives.sparse_embedding",
    "FlopsLoss": "bert_tf.objectives.sparse_embedding",
    "SpladeLoss": "bert_tf.objectives.sparse_embedding",
    "masked_lm_loss": "bert_tf.objectives.pretraining",
    "next_sentence_loss": "bert_tf.objectives.pretraining",
    "pretraining_loss": "bert_tf.objectives.pretraining",
    "fill_mask": "bert_tf.models.fill_mask",
    "PretrainedModel": "bert_tf.models.from_pretrained",
    "load_pretrained": "bert_tf.models.load_pretrained",
    "quantize_embeddings": "bert_tf.extraction.quantization",
}
# Packages and modules reached as bert_tf.<name>: name -> module.
_SUBMODULES = {name: f"bert_tf.{name}" for name in (
    "checkpoints", "config", "data", "extraction", "files", "layers", "models",
    "objectives", "optimization", "pretraining", "runs", "tasks", "text",
    "tokenization", "training", "wordpiece")}
_SUBMODULES.update({
    "conversion": "bert_tf.checkpoints.conversion",
    "huggingface": "bert_tf.checkpoints.huggingface",
    "pretrained": "bert_tf.models.load_pretrained",
    "vocabulary": "bert_tf.wordpiece.vocabulary",
})

__all__ = sorted(_EXPORTS) + sorted(_SUBMODULES)


def __getattr__(name):
  if name in _EXPORTS:
    return getattr(importlib.import_module(_EXPORTS[name]), name)
  if name in _SUBMODULES:
    return importlib.import_module(_SUBMODULES[name])
  raise AttributeError(f"module 'bert_tf' has no attribute {name!r}")


def __dir__():
  return __all__


_KERAS_AND_TENSORFLOW = {"keras", "tensorflow"}


class _RegisterWithKeras(importlib.abc.MetaPathFinder):
  """Imports bert_tf.keras_objects at the end of the outermost import of
  keras, tensorflow or a bert_tf module, once keras and tensorflow are both
  loaded; then leaves sys.meta_path.

  Registering any earlier would import bert_tf's classes into half-made
  modules: keras and tensorflow import each other (tensorflow inside a
  try/except that drops ImportError, so an error there would vanish), and a
  bert_tf module may be the one importing them. It finds nothing itself:
  for those names it wraps the loader of the spec the other finders give.
  """

  def __init__(self):
    self._running = 0  # those imports under way, one inside another

  def find_spec(self, name, path=None, target=None):
    if name not in _KERAS_AND_TENSORFLOW and not name.startswith("bert_tf."):
      return None
    sys.meta_path.remove(self)
    try:
      spec = importlib.util.find_spec(name)
    finally:
      sys.meta_path.insert(0, self)
    if spec is None or spec.loader is None:
      return spec
    run_module = spec.loader.exec_module

    def exec_module(module):
      self._running += 1
      try:
        run_module(module)
      finally:
        self._running -= 1
      if not self._running and _KERAS_AND_TENSORFLOW <= sys.modules.keys():
        sys.meta_path.remove(self)
        importlib.import_module("bert_tf.keras_objects")

    spec.loader.exec_module = exec_module
    return spec


if _KERAS_AND_TENSORFLOW <= sys.modules.keys():
  importlib.import_module("bert_tf.keras_objects")
else:
  sys.meta_path.insert(0, _RegisterWithKeras())
