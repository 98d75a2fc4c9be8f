"""Task metrics computed from all of a run's predictions."""
