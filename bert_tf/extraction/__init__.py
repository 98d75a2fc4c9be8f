"""extract_features: each line's contextual embeddings, as JSONL or npz,
and their export."""
