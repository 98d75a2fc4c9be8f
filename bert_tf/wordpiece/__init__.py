"""WordPiece without TensorFlow: the original tokenizer's rules and classes,
its fast paths, vocab.txt and tokenizer.json vocabularies, and casing."""
