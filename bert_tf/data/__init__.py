"""What every task shares to feed the model: batching (length buckets),
TFRecord reading and writing, feature records, and text inputs packed as
the original packs them."""
