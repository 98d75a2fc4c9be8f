"""Model directories and their weights, by the original checkpoint names.

names: the original TF1 names and the shapes a config gives them.
tf_checkpoints: TF1 name-based checkpoints <-> Keras variables.
huggingface: Hugging Face folders read and written under the original names.
model_directory: opening any model directory (Checkpoint).
directory_writer: writing a model directory in either format.
conversion: converting between the formats (bert_tf.conversion: with the
  names of opening and writing).
saving: a model (any with checkpoint names) written as a model directory.

This package knows no model class; importing it imports no TensorFlow.
"""
