"""SQuAD v1.1 and v2.0: answer spans (run_squad)."""
