"""InGraphTokenizer: the original FullTokenizer as TensorFlow ops.

Serving signatures take raw text, so tokenisation must run inside the graph
and give exactly the ids `bert_tf.tokenization.FullTokenizer` gives. The steps
mirror BasicTokenizer with regex classes built from Python's own Unicode
tables (char_classes.py); lower-casing and NFD come from ICU (tf.strings.lower,
text.normalize_utf8), and WordPiece from text.FastWordpieceTokenizer, which
implements the same greedy longest-match-first algorithm.

Under transformers' rules (rules.TRANSFORMERS_RULES) it gives the ids
transformers' BertTokenizer gives: special tokens found in the raw text,
case-sensitively, are kept whole and the text between them is tokenised on
its own, and words of over 100 characters become [UNK].
"""

import functools
import logging

import keras
import tensorflow as tf
import tensorflow_text as text
from keras.src.saving.serialization_lib import in_safe_mode

from bert_tf.text.char_classes import char_classes
from bert_tf.wordpiece import rules

logger = logging.getLogger(__name__)

# FastWordpieceTokenizer limits words by bytes; the original by characters
# (200, a tokenizer.json its max_input_chars_per_word; transformers 100).
# Longer words are replaced by [UNK] before WordPiece, so the byte limit
# only needs to admit every word of up to that many four-byte characters;
# the op takes an int32, more bytes than any word a string tensor holds.
_BYTES_PER_CHAR = 4
_MAX_WORD_BYTES = 2**31 - 1

# FastWordpieceTokenizer's longest piece (after "##").
_MAX_PIECE_BYTES = 256

# Planes where Unicode assigns characters; ICU and Python may disagree there.
_ASSIGNED_PLANES = [range(0x0, 0x40000), range(0xE0000, 0xF0000)]


def clean_and_split(texts, do_lower_case, validate_utf8=True):
  """BasicTokenizer in TensorFlow ops: [batch] strings -> ragged words.

  The steps keep the original's order where it matters: punctuation is split
  off after lower-casing and accent stripping, which can create punctuation
  (U+1FEF decomposes to "`"). CJK ideographs are split off in the same pass,
  later than the original does, which gives the same words: lower-casing
  and NFD map CJK ideographs to CJK ideographs and nothing else to them.

  Args:
    texts: [batch] UTF-8 strings.
    do_lower_case: lower-case and strip accents.
    validate_utf8: drop invalid UTF-8 bytes, as the original's decoding does;
      callers whose strings are known to be valid may skip it.
  """
  classes = char_classes()
  if validate_utf8:
    texts = tf.strings.unicode_transcode(texts, "UTF-8", "UTF-8",
                                         errors="ignore")
  texts = tf.strings.regex_replace(texts, classes["deleted"], "")
  # Every other separator becomes " ", so a plain split on " " suffices.
  texts = tf.strings.regex_replace(texts, classes["separators"], " ")
  if do_lower_case:
    texts = lower_and_strip_accents(texts)
  texts = tf.strings.regex_replace(
      texts, f"({classes['cjk']}|{classes['punctuation']})", r" \1 ")
  return tf.strings.split(texts, sep=None)


def _overlong(words, limit):
  """Which words are over `limit` characters: WordpieceTokenizer makes
  them [UNK].

  Characters are only counted when some word is over `limit` bytes: a word
  never has more characters than bytes.
  """
  return tf.cond(
      tf.reduce_any(tf.strings.length(words) > limit),
      lambda: tf.strings.length(words, unit="UTF8_CHAR") > limit,
      lambda: tf.zeros_like(words, tf.bool))


def _overlong_words_to_unk(words, limit):
  return tf.where(_overlong(words, limit), rules.UNK_TOKEN,
                  words)


def _literal_pattern(tokens):
  """An RE2 pattern matching any of `tokens` as written, the longest first
  where several match at one place (transformers' leftmost-longest)."""
  escaped = ["".join(char if char.isascii() and char.isalnum()
                     else f"\\x{{{ord(char):x}}}" for char in token)
             for token in sorted(tokens, key=len, reverse=True)]
  return "|".join(escaped)


def lower_and_strip_accents(texts):
  """do_lower_case's normalisation: lower-case, NFD, drop Mn marks."""
  texts = tf.strings.lower(texts, encoding="utf-8")
  texts = text.normalize_utf8(texts, "NFD")
  return tf.strings.regex_replace(texts, char_classes()["mark"], "")


@functools.lru_cache(maxsize=None)
def lower_case_differences():
  """{char: (Python result, ICU result)} where the two disagree.

  Python's unicodedata and TensorFlow's ICU follow different Unicode
  versions, so characters assigned in one and not the other are lower-cased
  or decomposed differently.
  """
  chars = [chr(code) for plane in _ASSIGNED_PLANES for code in plane
           if not 0xD800 <= code < 0xE000]
  # Cleaning deletes these before lower-casing, so they cannot differ.
  chars = [char for char in chars if rules.cleaned_char(char)]
  in_graph = lower_and_strip_accents(tf.constant(chars)).numpy()
  differences = {}
  for char, graph_result in zip(chars, in_graph):
    python_result = rules.strip_accents(char.lower())
    graph_result = graph_result.decode("utf-8")
    if python_result != graph_result:
      differences[char] = (python_result, graph_result)
  return differences


def version_sensitive_chars(vocab, do_lower_case):
  """Characters whose tokens may differ between Python and the graph.

  A difference changes the ids only when one of the two spellings could be
  covered by vocabulary pieces; otherwise both give [UNK] for the word.
  """
  if not do_lower_case:
    return frozenset()
  vocab_chars = set("".join(vocab))
  return frozenset(
      char for char, spellings in lower_case_differences().items()
      if any(set(spelling) <= vocab_chars for spelling in spellings))


def _wordpiece_vocab(vocabulary, max_chars):
  """The vocab as a list indexed by id, as FastWordpieceTokenizer wants it.

  Lines the original can never match become placeholders containing U+FFFD
  (which cleaning removes from every input; U+0000 would end the key in
  FastWordpieceTokenizer's trie): earlier copies of a repeated
  token (load_vocab keeps the last line), blank lines, "##" (an empty
  continuation, which the original never looks up) and pieces longer than
  a word may be (max_chars characters). A piece it could match that is
  over FastWordpieceTokenizer's byte limit is refused, naming the file.
  """
  vocab = vocabulary.vocab
  tokens = [None] * (max(vocab.values()) + 1) if vocab else []
  for token, index in vocab.items():
    tokens[index] = token
  for index, token in enumerate(tokens):
    piece = token and token.removeprefix("##")
    if not piece or len(piece) > max_chars:
      tokens[index] = f"\ufffdunused{index}"
    elif len(piece.encode("utf-8")) > _MAX_PIECE_BYTES:
      raise ValueError(
          f"{vocabulary.path}: token {index} ({token[:20]!r}...) has "
          f"{len(piece.encode('utf-8'))} bytes; the in-graph tokenizer "
          f"(TensorFlow Text's) takes pieces of up to {_MAX_PIECE_BYTES}")
  return tokens


@keras.saving.register_keras_serializable(package="bert_tf")
class InGraphTokenizer(keras.layers.Layer):
  """Strings -> WordPiece ids, identical to FullTokenizer, in TensorFlow ops.

  Usable eagerly, inside a tf.function and in a SavedModel. get_config holds
  vocab_file, which from_config reads, except under Keras' safe-mode
  deserialization (a .keras file's), which must not read a path a file
  names.

  Args:
    vocab_file: vocab.txt, one token per line, or a tokenizer.json (whose
      word length limit it follows under the original's rules, and whose
      casing do_lower_case must be).
    do_lower_case: lower-case and strip accents, as FullTokenizer.
    tokenization_rules: rules.ORIGINAL_RULES (FullTokenizer's ids) or
      rules.TRANSFORMERS_RULES (transformers' BertTokenizer's: the
      vocabulary's special tokens, rules.Vocabulary.special_tokens, kept
      whole where they appear in text; a word limit of 100 characters).

  Example:
    >>> tokenizer = InGraphTokenizer("vocab.txt", do_lower_case=True)
    >>> tokenizer(tf.constant(["Hello, world!"]))  # RaggedTensor of int64 ids
  """

  def __init__(self, vocab_file, do_lower_case=True,
               tokenization_rules=rules.ORIGINAL_RULES, **kwargs):
    kwargs.setdefault("trainable", False)
    super().__init__(**kwargs)
    rules.check_tokenization_rules(tokenization_rules)
    self.do_lower_case = do_lower_case
    self.tokenization_rules = tokenization_rules
    self.vocab_file = None
    if vocab_file is not None:
      self.set_vocabulary(vocab_file)

  def set_vocabulary(self, vocab_file):
    """Reads vocab.txt or a tokenizer.json; BertPreprocessor calls it when
    a .keras file is loaded (its vocabulary is an asset there)."""
    vocabulary = rules.read_vocabulary(vocab_file)
    rules.check_stated_casing(vocabulary, self.do_lower_case)
    vocab = vocabulary.vocab
    unk_token = rules.UNK_TOKEN
    if unk_token not in vocab:
      raise ValueError(f"{vocabulary.path}: has no {unk_token} token")
    self.vocabulary = vocabulary
    self.vocab_file = vocabulary.path
    self.vocab = vocab
    self.max_input_chars_per_word = vocabulary.max_input_chars_per_word
    # The tokens kept whole where they appear in text.
    self.kept_whole = ()
    if self.tokenization_rules == rules.TRANSFORMERS_RULES:
      self.max_input_chars_per_word = \
          rules.TRANSFORMERS_MAX_INPUT_CHARS_PER_WORD
      self.kept_whole = vocabulary.special_tokens
    self._kept_whole_pattern = _literal_pattern(self.kept_whole)
    self.sensitive_chars = version_sensitive_chars(vocab, self.do_lower_case)
    if self.sensitive_chars:
      logger.warning(
          "%s: Python and TensorFlow disagree (Unicode versions) on "
          "lower-casing %d characters that the vocabulary covers: %s; text "
          "containing them may tokenise differently in the graph",
          vocabulary.path, len(self.sensitive_chars),
          sorted(self.sensitive_chars)[:20])
    self._wordpiece = text.FastWordpieceTokenizer(
        vocab=_wordpiece_vocab(vocabulary, self.max_input_chars_per_word),
        suffix_indicator="##",
        max_bytes_per_word=min(_BYTES_PER_CHAR * self.max_input_chars_per_word,
                               _MAX_WORD_BYTES),
        token_out_type=tf.int64,
        unknown_token=rules.UNK_TOKEN,
        no_pretokenization=True,
        support_detokenization=False)

  def call(self, texts):
    """[batch] strings -> RaggedTensor [batch, (tokens)] of int64 ids."""
    return self.tokenize_ids(texts)

  def tokenize_ids(self, texts, validate_utf8=True):
    """call() without the Keras layer machinery, for bulk use.

    validate_utf8=False skips dropping invalid UTF-8 bytes, for callers
    whose strings are known to be valid (encoded from Python str).
    """
    texts = tf.convert_to_tensor(texts, tf.string)
    if self.kept_whole:
      return self._ids_keeping_whole(texts, validate_utf8)
    return self._ids(texts, validate_utf8)

  def _ids(self, texts, validate_utf8):
    """[batch] texts -> [batch, (tokens)] ids, words over the limit [UNK]."""
    words = clean_and_split(texts, self.do_lower_case, validate_utf8)
    words = tf.ragged.map_flat_values(_overlong_words_to_unk, words,
                                      self.max_input_chars_per_word)
    # [batch, (words), (pieces)] -> [batch, (tokens)]
    return self._wordpiece.tokenize(words).merge_dims(1, 2)

  def _ids_keeping_whole(self, texts, validate_utf8):
    """_ids, each special token found in the raw text (case-sensitively)
    kept whole, its own id, and the text between tokenised on its own, as
    transformers' added tokens (normalized false) split text."""
    if validate_utf8:
      texts = tf.strings.unicode_transcode(texts, "UTF-8", "UTF-8",
                                           errors="ignore")
    # regex_split ends a string at U+0000; cleaning deletes both.
    texts = tf.strings.regex_replace(texts, "\\x00", "\ufffd")
    pattern = self._kept_whole_pattern
    # [batch, (segments)]: the special tokens and the texts between them.
    segments = text.regex_split(texts, pattern, pattern)
    segment_texts = segments.flat_values
    is_token = tf.strings.regex_full_match(segment_texts, pattern)
    between = self._ids(tf.where(is_token, "", segment_texts), False)
    tokens = tf.boolean_mask(segment_texts, is_token)
    # [tokens]: which of kept_whole each is, then its id.
    which = tf.argmax(tf.equal(tokens[:, None], self.kept_whole), axis=1)
    token_ids = tf.RaggedTensor.from_row_lengths(
        tf.gather(tf.constant([self.vocab[token] for token in
                               self.kept_whole], tf.int64), which),
        tf.cast(is_token, tf.int64))
    # A segment is a token or text, so one of the two is empty.
    ids = tf.concat([between, token_ids], axis=1)
    return segments.with_flat_values(ids).merge_dims(1, 2)

  def word_pieces_with_offsets(self, words):
    """WordPiece for words already split (offsets.split_with_offsets).

    Args:
      words: [batch, (words)] strings.

    Returns:
      (ids, starts, ends): [batch, (words), (pieces)] int64: each piece's
      id and its first and past-the-end byte in its word. A word over the
      limit (200 characters) is one [UNK] spanning the word, as in the
      original.
    """
    overlong = tf.ragged.map_flat_values(_overlong, words,
                                         self.max_input_chars_per_word)
    ids, starts, ends = self._wordpiece.tokenize_with_offsets(
        tf.where(overlong, rules.UNK_TOKEN, words))
    # The [UNK] that replaced an overlong word covers all of it.
    piece_words = starts.values.value_rowids()
    covers_word = tf.gather(overlong.flat_values, piece_words)
    word_bytes = tf.gather(tf.strings.length(words.flat_values),
                           piece_words)
    starts = starts.with_flat_values(tf.where(
        covers_word, tf.zeros_like(starts.flat_values), starts.flat_values))
    ends = ends.with_flat_values(tf.where(
        covers_word, tf.cast(word_bytes, ends.dtype), ends.flat_values))
    return ids, starts, ends

  def compute_output_spec(self, texts):
    return keras.KerasTensor((None, None), dtype="int64", ragged=True)

  def get_config(self):
    config = super().get_config()
    config.update(vocab_file=self.vocab_file, do_lower_case=self.do_lower_case,
                  tokenization_rules=self.tokenization_rules)
    return config

  @classmethod
  def from_config(cls, config):
    if config.get("vocab_file") is not None and in_safe_mode():
      raise ValueError("InGraphTokenizer config: 'vocab_file' names a path, "
                       "which Keras' safe mode may not read")
    return cls(**config)


def sharded_tokenize_fn(tokenizer, num_shards):
  """A tf.function tokenising a batch as `num_shards` independent slices.

  String ops run one per core at best; independent slices in one graph let
  TensorFlow's executor run them on all cores at once. Inputs must be valid
  UTF-8 (encoded from Python str).
  """

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
  def tokenize(texts):
    size = tf.shape(texts)[0]
    slices = [texts[size * index // num_shards:
                    size * (index + 1) // num_shards]
              for index in range(num_shards)]
    return tf.concat([tokenizer.tokenize_ids(piece, validate_utf8=False)
                      for piece in slices], axis=0)

  return tokenize

