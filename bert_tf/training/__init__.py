"""The runners' training loop: Trainer, its distribution, checkpoints and
progress."""
