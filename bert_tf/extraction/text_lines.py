"""extract_features' input: one example per line, read as the original.

Every line is an example, blank ones too; a line is stripped of
whitespace; a pair is split by the original's regular expression
`^(.*) \\|\\|\\| (.*)$`, whose greedy first group makes the last " ||| "
the split; "|||" without the spaces around it is text. Lines end at "\\n"
only, as the original's readline (a "\\r" inside a line stays text, then
is stripped at the ends).
"""

import dataclasses
import re
from typing import Optional

from bert_tf.files import input_checks

_PAIR = re.compile(r"^(.*) \|\|\| (.*)$")


@dataclasses.dataclass
class LineExample:
  """One input line: unique_id is its 0-based number (the output's
  linex_index); text_b is None for a single text."""
  unique_id: int
  text_a: str
  text_b: Optional[str] = None


def read_lines(path, flag="--input_file"):
  """The examples of a text file, one per line.

  Raises:
    ValueError: the file is missing or not UTF-8, naming the file and line.
  """
  input_checks.check_input_file(flag, path)
  examples = []
  for number, line in input_checks.utf8_lines(path):
    line = line.strip()
    match = _PAIR.match(line)
    examples.append(LineExample(number - 1, *match.groups()) if match
                    else LineExample(number - 1, line))
  return examples
