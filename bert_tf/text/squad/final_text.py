"""run_squad's answer text (the original's get_final_text) in TensorFlow
ops, so that a served answer is predictions.json's.

write_predictions maps the predicted pieces back onto the whitespace-
delimited words they are of by aligning the words' characters with their
BasicTokenizer tokens', spaces stripped. Where that alignment cannot work
it answers all of those words, joined by single spaces: when a piece is
[UNK] (its text is not found among the tokens), or when BasicTokenizer
changes how many characters the words have: cleaning deletes one (U+200B,
U+00AD) or makes it a separator (U+2009, U+00A0), stripping drops a
combining accent, NFD splits a Hangul syllable. Otherwise it answers the
pieces' own characters, with each run of whitespace between words as one
space.

Two corners of the original are not followed: where the words both lose
and gain characters by the same count, its one-to-one alignment is off by
that much, and where the predicted text also occurs earlier in its first
word (a span starting inside "banana" at its second "ana"), it answers the
first occurrence's characters; both differ from the pieces' characters at
most in case and accents.
"""

import collections

import tensorflow as tf

# run_squad's is_whitespace: what separates the words it aligns.
WORD_SEPARATOR = "[ \t\r\n\u202f]"

# start, end: [batch] int64 character offsets of the text answered (end
#   exclusive); text: [batch] the answer.
FinalText = collections.namedtuple("FinalText", ["start", "end", "text"])


def final_text(texts, piece_start, piece_end, has_unknown, char_sizes):
  """The text predictions.json answers for spans of word pieces.

  Args:
    texts: [batch] valid UTF-8 contexts.
    piece_start, piece_end: [batch] int64 character offsets of each
      answer's first and last piece (end exclusive); rows without an
      answer may hold anything.
    has_unknown: [batch] bool: a piece of the answer is [UNK].
    char_sizes: [batch, (chars)] how many word characters each character
      of the texts becomes (offsets.Words.text_char_sizes).

  Returns:
    FinalText: the span's own characters, or where the original falls
    back, its whole words.
  """
  chars = tf.strings.unicode_split(texts, "UTF-8")
  lengths = chars.row_lengths()
  is_separator = tf.strings.regex_full_match(chars, WORD_SEPARATOR)
  # Characters gained (+) or lost (-) in BasicTokenizer's words, summed
  # from each text's start: [batch, chars + 1].
  changes = tf.where(is_separator, tf.zeros([], tf.int64), char_sizes - 1)
  changed_before = tf.pad(tf.math.cumsum(changes.to_tensor(), axis=1),
                          [[0, 0], [1, 0]])
  last = tf.maximum(lengths - 1, 0)
  start = tf.clip_by_value(piece_start, 0, last)
  end = tf.clip_by_value(piece_end, start + 1, tf.maximum(lengths, 1))
  # The separators of each text, in order, with one before its start and
  # one past its end.
  separators = tf.ragged.boolean_mask(tf.ragged.range(lengths),
                                      is_separator).to_tensor(tf.int64.max)
  separators = tf.concat([-tf.ones_like(lengths)[:, None], separators,
                          tf.fill([tf.size(lengths), 1], tf.int64.max)], 1)
  before = tf.searchsorted(separators, start[:, None], side="left",
                           out_type=tf.int64) - 1
  after = tf.searchsorted(separators, end[:, None] - 1, side="right",
                          out_type=tf.int64)
  word_start = tf.gather(separators, before, batch_dims=1)[:, 0] + 1
  word_end = tf.minimum(tf.gather(separators, after, batch_dims=1)[:, 0],
                        lengths)
  changed = (tf.gather(changed_before, word_end[:, None], batch_dims=1)
             - tf.gather(changed_before, word_start[:, None],
                         batch_dims=1))[:, 0]
  whole_words = has_unknown | tf.not_equal(changed, 0)
  start = tf.where(whole_words, word_start, start)
  end = tf.where(whole_words, word_end, end)
  text = tf.strings.regex_replace(
      tf.strings.substr(texts, start, end - start, unit="UTF8_CHAR"),
      WORD_SEPARATOR + "+", " ")
  return FinalText(start, end, text)
