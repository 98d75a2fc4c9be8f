"""The original release's format: TF1 name-based checkpoints, read
(tf_checkpoints) and written (checkpoint_writer), beside a
bert_config.json."""
