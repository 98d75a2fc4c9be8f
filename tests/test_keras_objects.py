"""`import bert_tf` registers its Keras classes, whichever of bert_tf,
Keras, TensorFlow and tensorflow-text is imported first, without importing
TensorFlow itself; and an error while registering is never swallowed."""

import concurrent.futures
import itertools
import os
import subprocess
import sys

from tests.support.helpers import PROJECT_DIR

CLASSES = ("BertEncoder", "BertPretrainer", "BertClassifier", "BertSpanLabeler",
           "BertTagger", "BertFeatureTagger", "BertMultipleChoice",
           "BertMultipleChoicePreprocessor", "BertSpanPreprocessor",
           "BertTaggerPreprocessor",
           "BertPreprocessor", "AdamWeightDecay", "Lamb",
           "WarmupPolynomialDecay", "SelfAttention", "TransformerBlock",
           "BertEmbeddings", "MaskedLMHead", "ClassificationHead", "Dropout",
           "LayerCombination", "InGraphTokenizer",
           "MultipleNegativesRankingLoss", "BertEmbedder", "SentencePooling",
           "BertSparseEncoder", "SpladePooling", "BertRoutedSparseEncoder",
           "SparseStaticEmbedding", "MatryoshkaLoss",
           "SparseMultipleNegativesRankingLoss", "FlopsLoss", "SpladeLoss")
MODULES = ("bert_tf", "keras", "tensorflow", "tensorflow_text")
# Every order that starts with bert_tf (it registers later, in an import
# hook, when the next import brings Keras); one order that starts with each
# of the others (Keras is loaded by then, and bert_tf registers at once);
# and a bert_tf module that imports Keras itself as the first import (Keras
# and TensorFlow finish inside it).
ORDERS = [order for order in itertools.permutations(MODULES)
          if order[0] == "bert_tf" or order[1:] == tuple(
              sorted(set(MODULES) - {order[0]}))] + [
    ("bert_tf.layers.pooling",), ("bert_tf.tasks.runner",)]

# Imports the modules in argv[1]'s order; then every class is registered.
_REGISTERED = f"""
import importlib, sys
for name in sys.argv[1].split(","):
  importlib.import_module(name)
  if name == "bert_tf" and sys.argv[1].startswith("bert_tf,"):
    assert "tensorflow" not in sys.modules
import keras
for name in {CLASSES!r}:
  assert keras.saving.get_registered_object(
      f"bert_tf>{{name}}") is not None, name
"""
# The same imports with registering made to fail: the ImportError reaches
# the import statement that completes them. (Where bert_tf comes after any
# of the others, Keras and TensorFlow are loaded by then and `import
# bert_tf` registers at once: the orders that start with bert_tf are the
# ones that register later, in an import hook.)
_FAILING = """
import importlib, sys
sys.modules["bert_tf.keras_objects"] = None
try:
  for name in sys.argv[1].split(","):
    importlib.import_module(name)
except ImportError as error:
  assert "bert_tf.keras_objects" in str(error), error
  print("raised")
"""


def _run_all(code, orders, at_once=4):
  """{order: (exit code, stdout, stderr)} of `code` run in a fresh process
  per order, `at_once` at a time."""
  env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}

  def run(order):
    done = subprocess.run(
        [sys.executable, "-c", code, ",".join(order)], cwd=PROJECT_DIR,
        env=env, capture_output=True, text=True, timeout=300, check=False)
    return done.returncode, done.stdout, done.stderr

  with concurrent.futures.ThreadPoolExecutor(at_once) as pool:
    return dict(zip(orders, pool.map(run, orders)))


def test_every_import_order_registers_every_class():
  for order, (code, _, stderr) in _run_all(_REGISTERED, ORDERS).items():
    assert code == 0, (order, stderr[-2000:])


def test_an_error_while_registering_later_reaches_the_import():
  hooked = [order for order in ORDERS if order[0].startswith("bert_tf")]
  for order, (code, stdout, stderr) in _run_all(_FAILING, hooked).items():
    assert (code, stdout.strip()) == (0, "raised"), (order, stderr[-2000:])
