"""Tagging raw text and (words, tags) examples as run_ner does: the
features of tagged words (features), the words of a text tagged in
sequences of whole words and read as entities (tagging), the Keras
preprocessor that does both for BertTagger (preprocessor), and
transformers' token-classification pipeline's grouping (pipeline). The
runner, its export's serve_text and BertTagger share them."""
