"""Model directories and their weights, by the original checkpoint names.

names: the original TF1 names and the shapes a config gives them.
tf_checkpoints: TF1 name-based checkpoints <-> Keras variables.
huggingface: Hugging Face folders read and written under the original names.
conversion: opening any model directory; converting between the formats.
saving: a model (any with checkpoint names) written as a model directory.

This package knows no model class; importing it imports no TensorFlow.
"""
