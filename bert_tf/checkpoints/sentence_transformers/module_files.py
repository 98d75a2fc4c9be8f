"""The files of a sentence-transformers module's folder, and reading its
JSON ones."""

from bert_tf.files.json_files import read_json_object
from bert_tf.files.model_files import model_file

# A module's settings (a Pooling's, a Dense's, ...); the root's is the
# BERT's.
MODULE_CONFIG_FILE = "config.json"
# A Dense's or SparseStaticEmbedding's weights.
DENSE_WEIGHTS_FILE = "model.safetensors"


def json_object(directory, name):
  """A model file's JSON object, or None where the directory lacks it."""
  path = model_file(directory, name)
  return None if path is None else read_json_object(path)
