"""`import bert_tf` registers its Keras classes, whichever of bert_tf and
Keras is imported first, without importing TensorFlow itself."""

import subprocess
import sys

import pytest

from tests.support.helpers import PROJECT_DIR

CLASSES = ("BertEncoder", "BertPretrainer", "BertClassifier", "BertSpanLabeler",
           "BertTagger", "BertFeatureTagger", "BertMultipleChoice",
           "BertPreprocessor", "AdamWeightDecay", "Lamb",
           "WarmupPolynomialDecay", "SelfAttention", "TransformerBlock",
           "BertEmbeddings", "MaskedLMHead", "ClassificationHead", "Dropout",
           "LayerCombination", "InGraphTokenizer",
           "MultipleNegativesRankingLoss", "BertEmbedder", "SentencePooling")


@pytest.mark.parametrize("imports", [
    "import bert_tf\nassert 'tensorflow' not in sys.modules\nimport keras",
    "import keras\nimport bert_tf",
    "import bert_tf\nimport tensorflow as tf\nkeras = tf.keras",
])
def test_import_bert_tf_registers_every_keras_class(imports):
  script = (f"import sys\n{imports}\n"
            "import keras\n"
            f"for name in {CLASSES!r}:\n"
            "  assert keras.saving.get_registered_object(\n"
            "      f'bert_tf>{name}') is not None, name\n")
  result = subprocess.run([sys.executable, "-c", script], cwd=PROJECT_DIR,
                          capture_output=True, text=True, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
