"""How run_squad chooses answers: the original's flags, with no
TensorFlow to import, so that a program checks them before it loads it."""

import dataclasses

# The original starts its search for the smallest null score here.
LARGE_NULL_SCORE = 1000000


@dataclasses.dataclass(frozen=True)
class AnswerOptions:
  """The original's flags of the same names."""
  n_best_size: int = 20
  max_answer_length: int = 30
  version_2_with_negative: bool = False
  null_score_diff_threshold: float = 0.0
  verbose_logging: bool = False
