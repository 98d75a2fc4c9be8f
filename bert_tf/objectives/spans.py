"""run_squad's loss: the mean over real features of the start and end
position cross-entropies, averaged, as the original's
(start_loss + end_loss) / 2; and how often each position is right."""

import keras
from keras import ops

from bert_tf.objectives import cross_entropy
from bert_tf.objectives.objective import Objective, Term

_ENDS = ("start", "end")


@keras.saving.register_keras_serializable(package="bert_tf")
def span_cross_entropy(positions, logits):
  """The mean of the start and end cross-entropies of each example:
  positions [batch, 2], logits [batch, 2, seq_length] -> [batch]."""
  return ops.mean(cross_entropy.class_cross_entropy(positions, logits),
                  axis=-1)


class SpanObjective(Objective):
  """The span's loss over (start, end) positions and logits stacked as
  BertSpanLabeler's target_output, and each end's accuracy."""

  terms = (Term("span_loss", span_cross_entropy,
                targets=tuple(f"{end}_positions" for end in _ENDS),
                scores=tuple(f"{end}_logits" for end in _ENDS),
                weights="is_real_example"),)
  metrics = {f"{end}_accuracy": Term(
      f"{end}_accuracy", cross_entropy.class_correct,
      targets=f"{end}_positions", scores=f"{end}_logits",
      weights="is_real_example") for end in _ENDS}
  keras_metric = ("sparse_categorical_accuracy", cross_entropy.class_correct)
