"""Training machinery shared by the runners: the original optimizer and schedule."""
