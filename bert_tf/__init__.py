"""bert_tf: Google's BERT release on TensorFlow 2 / Keras 3, same files, same numbers.

The public names load on first use, so that tools which need no TensorFlow
(create_pretraining_data, the tokenizer) start without importing it. The
Keras classes register with Keras (bert_tf.keras_objects) once Keras is
loaded, before or after bert_tf, so that keras.saving.load_model reads a
.keras file after a plain `import bert_tf`.
"""

import importlib
import importlib.abc
import importlib.util
import sys

__version__ = "0.1.0"

# Public name -> module defining it.
_EXPORTS = {
    "AdamWeightDecay": "bert_tf.training.optimization",
    "BertClassifier": "bert_tf.models",
    "BertConfig": "bert_tf.config",
    "BertEmbedder": "bert_tf.models",
    "BertEncoder": "bert_tf.models",
    "BertFeatureTagger": "bert_tf.models",
    "BertMultipleChoice": "bert_tf.models",
    "BertPreprocessor": "bert_tf.text.preprocessor",
    "BertPretrainer": "bert_tf.models",
    "BertSpanLabeler": "bert_tf.models",
    "BertTagger": "bert_tf.models",
    "WarmupPolynomialDecay": "bert_tf.training.optimization",
    "create_optimizer": "bert_tf.training.optimization",
    "LoadReport": "bert_tf.checkpoints.tf_checkpoints",
    "checkpoint_variables": "bert_tf.checkpoints.tf_checkpoints",
    "load_checkpoint": "bert_tf.checkpoints.tf_checkpoints",
    "save_checkpoint": "bert_tf.checkpoints.checkpoint_writer",
    "MultipleNegativesRankingLoss": "bert_tf.training.losses",
    "masked_lm_loss": "bert_tf.training.losses",
    "next_sentence_loss": "bert_tf.training.losses",
    "pretraining_loss": "bert_tf.training.losses",
    "PretrainedModel": "bert_tf.models.pretrained",
    "load_pretrained": "bert_tf.models.pretrained",
}
# Packages and modules reached as bert_tf.<name>: name -> module.
_SUBMODULES = {name: f"bert_tf.{name}" for name in (
    "checkpoints", "config", "data", "features", "files", "layers", "models",
    "pretraining", "tasks", "text", "tokenization", "training", "wordpiece")}
_SUBMODULES.update({
    "conversion": "bert_tf.checkpoints.conversion",
    "huggingface": "bert_tf.checkpoints.huggingface",
    "losses": "bert_tf.training.losses",
    "pretrained": "bert_tf.models.pretrained",
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


class _RegisterWithKeras(importlib.abc.MetaPathFinder):
  """Imports bert_tf.keras_objects once keras and tensorflow have both
  finished importing and no bert_tf module is half-imported, then leaves
  sys.meta_path.

  keras and tensorflow import each other (tensorflow's __init__ imports
  keras inside a try/except that drops ImportError), and a bert_tf module
  may be the one importing them: registering before all of those have run
  would import bert_tf's classes into half-made modules, and an error there
  could vanish. It finds nothing itself: for those names it takes the spec
  the other finders give and wraps its loader.
  """

  _NAMES = ("keras", "tensorflow")

  def __init__(self):
    self._finished = {name for name in self._NAMES if name in sys.modules}
    self._bert_tf_running = 0

  def find_spec(self, name, path=None, target=None):
    ours = name.startswith("bert_tf.")
    if name not in self._NAMES and not ours:
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
      self._bert_tf_running += ours
      try:
        run_module(module)
      finally:
        self._bert_tf_running -= ours
      if not ours:
        self._finished.add(name)
      self._register_when_ready()

    spec.loader.exec_module = exec_module
    return spec

  def _register_when_ready(self):
    if self._finished == set(self._NAMES) and not self._bert_tf_running \
        and self in sys.meta_path:
      sys.meta_path.remove(self)
      importlib.import_module("bert_tf.keras_objects")


if "keras" in sys.modules and "tensorflow" in sys.modules:
  importlib.import_module("bert_tf.keras_objects")
else:
  sys.meta_path.insert(0, _RegisterWithKeras())
