"""Model directories and their weights, by the original checkpoint names.

One subpackage per format, none importing another:
  original/: TF1 name-based checkpoints beside a bert_config.json, read
    (tf_checkpoints) and written (checkpoint_writer).
  huggingface/: Hugging Face folders: the architectures and their names,
    config.json (config), the weights read under the original names
    (reader).
  sentence_transformers/: a sentence-transformers folder's modules and
    settings (its Pipeline), their activations, its Dense weights (reader)
    and the files it is written as (writer).
What every format shares:
  names: the original names and the shapes a config gives them.
  model_weights: a model's variables by those names, loaded from any
    format's reader.
  model_directory: the one place that asks what kind of directory a path
    is: open_model_directory gives a ModelDirectory, each file read once.
  directory_writer: writing a model directory in either format.
  conversion: converting between the formats (bert_tf.conversion).
  save_pretrained: a model (any with checkpoint names) written as a model
    directory.

This package knows no model class; importing it imports no TensorFlow.
"""
