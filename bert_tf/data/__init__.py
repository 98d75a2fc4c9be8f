"""Pretraining data: instance creation, TFRecord features and writing."""
