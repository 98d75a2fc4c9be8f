"""Each task's loss and metrics, stated once for the runners' Trainer and
for Keras' compile().

A task states a loss of each example (or prediction) and which features
are its targets and weights (objective.Term). From it come both forms:

- the Trainer's: a loss such as the original's masked-LM loss is a ratio,
  a sum over predictions divided by their weight. Split over replicas or
  micro-batches, the mean of per-part ratios is not the whole batch's
  ratio, so an objective gives each loss term as a numerator (from the
  model's outputs) and a denominator (from the features alone, summed over
  the global batch before any forward pass). The trainer divides every
  part's numerator by the global denominator: the summed gradient is the
  gradient of exactly the loss one device computes on the whole batch.
  Metrics are (sum, count) pairs, accumulated over steps as the
  original's tf.metrics were; every loss term is also reported.
- Keras': the same function of (targets, scores) as a keras Loss, and the
  metric's as a Keras metric, which a model's compile() takes by default.
"""
