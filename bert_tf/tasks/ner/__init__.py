"""CoNLL-2003 named entities: tagging, fine-tuned or feature-based (run_ner)."""
