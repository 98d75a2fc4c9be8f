"""Entity-level precision, recall and F1, as conlleval counts them.

seqeval's default mode reads chunks as conlleval.pl does (an entity starts
at B-, or at I- after O or after another type, in IOB1 and IOB2 alike);
conlleval's overall figures are the micro average. Types are those found
in the gold tags or the predictions, as conlleval lists them.
"""

import warnings

from seqeval.metrics import classification_report


def entity_metrics(gold_tags, predicted_tags):
  """{eval_precision, eval_recall, eval_f1, eval_<TYPE>_precision, ...}.

  Args:
    gold_tags: a list of sentences' tag lists.
    predicted_tags: the predicted tags, the same shape.

  Returns:
    Fractions in [0, 1]; 0 where a figure has no entities to count.
  """
  with warnings.catch_warnings():
    # The macro average of no types at all (no entities anywhere) is a
    # mean of nothing, which this function does not report.
    warnings.simplefilter("ignore", RuntimeWarning)
    report = classification_report(gold_tags, predicted_tags,
                                   output_dict=True, zero_division=0)
  results = {}
  for name, figures in report.items():
    if name.endswith(" avg") and name != "micro avg":
      continue
    prefix = "eval" if name == "micro avg" else f"eval_{name}"
    for figure, key in (("precision", "precision"), ("recall", "recall"),
                        ("f1-score", "f1")):
      results[f"{prefix}_{key}"] = float(figures[figure])
  return results
