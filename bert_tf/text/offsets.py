"""BasicTokenizer's words in TensorFlow ops, with where each came from.

Raw-text signatures answer in character offsets into the string the client
sent (an answer's start and end, an entity's), but cleaning, lower-casing
and accent stripping change the text. So the text is normalised here one
character at a time, and every normalised character keeps the index of the
character it came from. Lower-casing is context-sensitive in one place (a
final sigma), so the normalised characters themselves are taken from the
whole text, normalised as tokenizer.clean_and_split normalises it; the two
have the same length (NFD only reorders combining marks, which stripping
drops), which is checked.

Offsets are in Unicode code points of the text as sent (Python's str
indexes), end exclusive.
"""

import collections

import tensorflow as tf

from bert_tf.text.char_classes import char_classes
from bert_tf.text.tokenizer import lower_and_strip_accents
from bert_tf.wordpiece import rules

# words: [batch, (words)] strings, as clean_and_split gives them.
# word_starts, word_ends: [batch, (words)] int64 character offsets.
# char_starts, char_ends: [batch, (words), (chars)] int64: for each
#   character of each word, the text's characters it came from: the one it
#   is of, and the characters after that which normalise to nothing (a
#   combining accent, a soft hyphen), so a word keeps its accents.
# text_char_sizes: [batch, (text chars)] int64: how many word characters
#   each character of the text becomes: 1 for most, 0 for one that
#   cleaning deletes (U+200B) or makes a separator (U+2009) and for a
#   combining accent that stripping drops, 3 for a Hangul syllable that NFD
#   splits.
Words = collections.namedtuple(
    "Words", ["words", "word_starts", "word_ends", "char_starts",
              "char_ends", "text_char_sizes"])


# ids, starts, ends: [batch, (words), (pieces)] int64: each word piece's id
#   and the characters of the text its first and last characters came from
#   (end exclusive; a piece of part of a character, as of a Hangul
#   syllable's jamo, spans the whole character).
# words: Words.
TokenizedText = collections.namedtuple(
    "TokenizedText", ["ids", "starts", "ends", "words"])


def tokenize_with_offsets(tokenizer, texts):
  """InGraphTokenizer's ids, by word, with character offsets.

  Args:
    tokenizer: an InGraphTokenizer of the original's rules (the runners',
      whose exports answer with offsets).
    texts: [batch] valid UTF-8 strings (invalid ones fail the call).

  Returns:
    TokenizedText; its ids, merged over words, are tokenizer(texts).
  """
  if tokenizer.tokenization_rules != rules.ORIGINAL_RULES:
    raise ValueError(f"tokenize_with_offsets: the tokenizer follows "
                     f"{tokenizer.tokenization_rules}' rules; offsets follow "
                     f"the original's")
  return tokenize_words(tokenizer, texts)


def tokenize_words(tokenizer, texts, ends_over_dropped=True):
  """texts [batch] split into words with character offsets
  (split_with_offsets), and each word's pieces: a TokenizedText.
  A word over the tokenizer's limit is one [UNK]; text is split as the
  original splits it whatever the tokenizer's rules (transformers' keeps
  its special tokens whole: callers refuse those, see kept_whole_token).

  ends_over_dropped: a piece's end runs on over the characters after it
  that normalisation drops (a combining accent), as a word keeps its
  accents; else it ends after its last character, as transformers'
  offsets do.
  """
  words = split_with_offsets(texts, tokenizer.do_lower_case)
  ids, byte_starts, byte_ends = tokenizer.word_pieces_with_offsets(
      words.words)
  spans = words if ends_over_dropped else words._replace(
      char_ends=words.char_starts + 1)
  starts, ends = piece_offsets(spans, byte_starts, byte_ends)
  return TokenizedText(ids, starts, ends, words)


def kept_whole_token(tokenizer, text):
  """The first of the tokens the tokenizer keeps whole (transformers'
  special tokens) that text holds, or None: tokenize_words splits them as
  words."""
  for token in tokenizer.kept_whole:
    if token in text:
      return token
  return None


def split_with_offsets(texts, do_lower_case):
  """clean_and_split's words, and the characters each came from.

  Args:
    texts: [batch] valid UTF-8 strings (invalid ones fail the call).
    do_lower_case: lower-case and strip accents.

  Returns:
    Words.
  """
  classes = char_classes()
  chars = tf.strings.unicode_split(texts, "UTF-8", errors="strict")
  cleaned = tf.strings.regex_replace(chars.flat_values, classes["deleted"],
                                     "")
  cleaned = tf.strings.regex_replace(cleaned, classes["separators"], " ")
  normalize = lower_and_strip_accents if do_lower_case else tf.identity
  per_char = tf.strings.unicode_split(normalize(cleaned), "UTF-8")
  # [batch, (normalised chars)], and the flat index of each one's source.
  normalized = chars.with_flat_values(per_char).merge_dims(1, 2)
  sources = per_char.value_rowids()
  source_ends = _ends_over_vanished(chars, per_char.row_lengths() > 0)
  if do_lower_case:
    whole = tf.strings.unicode_split(normalize(tf.strings.reduce_join(
        chars.with_flat_values(cleaned), axis=1)), "UTF-8")
    tf.debugging.assert_equal(
        whole.row_lengths(), normalized.row_lengths(),
        message="internal: a text normalises to a different length one "
                "character at a time")
    normalized = normalized.with_flat_values(whole.flat_values)
  values = normalized.flat_values
  is_space = tf.equal(values, " ")
  stands_alone = tf.strings.regex_full_match(
      values, f"{classes['cjk']}|{classes['punctuation']}")
  # A word starts at a character that is not a space and stands alone, or
  # follows a space, a character standing alone, or the start of its text.
  breaks_after = tf.concat([[True], is_space | stands_alone], 0)[:-1]
  starts_word = ~is_space & (stands_alone | breaks_after
                             | first_of_row(normalized))
  kept = ~is_space
  # [words, (chars)], built from each character's word: TensorFlow finds
  # the rows of a ragged tensor built from row starts by tiling a dense
  # [rows, longest row], which a text holding one long word makes grow
  # with the square of its length.
  char_words = tf.math.cumsum(tf.cast(tf.boolean_mask(starts_word, kept),
                                      tf.int64)) - 1
  word_chars = tf.RaggedTensor.from_value_rowids(
      tf.boolean_mask(values, kept), char_words)
  # Which text each word is of, and offsets within that text.
  word_rows = tf.gather(normalized.value_rowids(),
                        tf.where(starts_word)[:, 0])
  kept_sources = tf.boolean_mask(sources, kept)
  # [kept chars]: where each one's text starts, subtracted flat (a ragged
  # minus a [words, 1] broadcasts through a dense [words, longest word]).
  text_starts = tf.gather(chars.row_starts(), tf.boolean_mask(
      normalized.value_rowids(), kept))
  char_starts = word_chars.with_flat_values(kept_sources - text_starts)
  char_ends = word_chars.with_flat_values(
      tf.gather(source_ends, kept_sources) - text_starts)
  by_text = lambda flat: tf.RaggedTensor.from_value_rowids(
      flat, word_rows, nrows=chars.nrows())
  return Words(
      words=by_text(tf.strings.unsorted_segment_join(
          word_chars.values, char_words, word_chars.nrows())),
      word_starts=by_text(tf.gather(char_starts.values,
                                    char_starts.row_starts())),
      word_ends=by_text(tf.gather(char_ends.values,
                                  char_ends.row_limits() - 1)),
      char_starts=by_text(char_starts), char_ends=by_text(char_ends),
      text_char_sizes=chars.with_flat_values(tf.math.unsorted_segment_sum(
          tf.cast(kept, tf.int64), sources, tf.size(chars.flat_values))))


def first_of_row(ragged):
  """[values] flat: whether each value is the first of its row."""
  return tf.equal(tf.range(tf.size(ragged.value_rowids(), tf.int64)),
                  tf.gather(ragged.row_starts(), ragged.value_rowids()))


def _ends_over_vanished(chars, produces):
  """[chars] flat: where each character's span ends, running on over the
  characters after it (in its text) that produce nothing.

  Args:
    chars: [batch, (chars)] the texts' characters.
    produces: [chars] flat: whether each gives a normalised character.
  """
  positions = tf.range(tf.size(produces, tf.int64), dtype=tf.int64)
  producing = tf.boolean_mask(positions, produces)
  following = tf.searchsorted(producing, positions, side="right",
                              out_type=tf.int64)
  next_producing = tf.gather(
      tf.concat([producing, [tf.size(produces, tf.int64)]], 0), following)
  return tf.minimum(next_producing,
                    tf.gather(chars.row_limits(), chars.value_rowids()))


def piece_offsets(words, piece_byte_starts, piece_byte_ends):
  """Character offsets into the texts of word pieces given in bytes of
  their words.

  Args:
    words: Words.
    piece_byte_starts, piece_byte_ends: [batch, (words), (pieces)] byte
      offsets into each word (end exclusive), as WordPiece gives them.

  Returns:
    (starts, ends): [batch, (words), (pieces)] int64: the characters of the
    text the piece's first and last characters came from (end exclusive).
  """
  # Each character's first byte, counting the words' bytes one after
  # another over the batch: [chars] ascending, as is each word's first.
  char_bytes = tf.strings.length(tf.strings.unicode_split(
      words.words.flat_values, "UTF-8"))
  char_byte_starts = tf.math.cumsum(tf.cast(char_bytes.flat_values,
                                            tf.int64), exclusive=True)
  word_byte_starts = tf.gather(char_byte_starts, char_bytes.row_starts())

  def char_of(byte_offsets):
    """[words, (pieces)] byte offsets -> the flat index of the character
    holding each of those bytes: one search over all the characters, not
    one per word over a dense [words, longest word]."""
    flat = (tf.gather(word_byte_starts, byte_offsets.value_rowids())
            + byte_offsets.values)
    return byte_offsets.with_values(tf.searchsorted(
        char_byte_starts, flat, side="right", out_type=tf.int64) - 1)

  starts = tf.gather(words.char_starts.flat_values, char_of(
      tf.cast(piece_byte_starts.values, tf.int64)))
  ends = tf.gather(words.char_ends.flat_values, char_of(
      tf.cast(piece_byte_ends.values, tf.int64) - 1))
  return (piece_byte_starts.with_values(starts),
          piece_byte_ends.with_values(ends))
