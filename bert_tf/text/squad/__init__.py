"""Question answering on raw text, as run_squad: its examples and
features (doc_stride windows, in numpy and in TensorFlow ops), its choice
of the answer span and the answer's text, and BertSpanLabeler's
preprocessor. The runner, the export's serve_text and the Keras model use
this one implementation."""
