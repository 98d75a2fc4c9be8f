"""The original tokenizer's character classes as RE2 regex classes.

The in-graph tokenizer must classify every character exactly as the Python
tokenizer does. RE2's own \\p{...} tables follow a different Unicode version
than Python's unicodedata, so the classes are built here from unicodedata
itself and spelled out as explicit code-point ranges.
"""

import functools
import sys
import unicodedata

from bert_tf.wordpiece import rules

_SURROGATES = range(0xD800, 0xE000)
# Unicode categories no class but cjk holds outside ASCII: letters, numbers,
# symbols (ASCII symbols are punctuation to BERT), unassigned, private use.
_IN_NO_CLASS = frozenset(["Lu", "Ll", "Lt", "Lm", "Lo", "Nd", "Nl", "No",
                          "Sm", "Sc", "Sk", "So", "Cn", "Co", "Cs"])


def _code_points():
  return (code for code in range(sys.maxunicode + 1)
          if code not in _SURROGATES)


def to_regex_class(code_points):
  """Sorted code points -> "[\\x{41}-\\x{5A}\\x{61}]" (RE2 syntax)."""
  parts = (f"\\x{{{low:X}}}" if low == high
           else f"\\x{{{low:X}}}-\\x{{{high:X}}}"
           for low, high in rules.code_point_ranges(code_points))
  return "[" + "".join(parts) + "]"


@functools.lru_cache(maxsize=None)
def char_classes():
  """Regex classes for each step of BasicTokenizer, from Python's tables.

  Returns a dict:
    deleted: what cleaning removes (U+0000, U+FFFD, Cc and Cf but \\t\\n\\r).
    separators: every character other than " " that separates words and is
      not deleted: what cleaning turns into " " (\\t, \\n, \\r, Zs) and the
      rest of Python's str.split() whitespace (U+2028, U+2029).
    cjk: CJK ideographs, each made a word of its own.
    mark: Unicode Mn, dropped when stripping accents.
    punctuation: split off as one-character words.
  """
  members = {name: [] for name in ("deleted", "separators", "mark",
                                   "punctuation")}
  members["cjk"] = [code for low, high in rules.CJK_RANGES
                    for code in range(low, high + 1)]
  for code in _code_points():
    char = chr(code)
    # Skipping what is in no class (but U+FFFD) saves most of the time; the
    # tests check the classes against every BMP character.
    if (code > 127 and code != 0xFFFD
        and unicodedata.category(char) in _IN_NO_CLASS):
      continue
    cleaned = rules.cleaned_char(char)
    if not cleaned:
      members["deleted"].append(code)
    elif char != " " and (cleaned == " " or char.isspace()):
      members["separators"].append(code)
    if unicodedata.category(char) == "Mn":
      members["mark"].append(code)
    if rules.is_punctuation(char):
      members["punctuation"].append(code)
  return {name: to_regex_class(codes) for name, codes in members.items()}
