"""Making a vocab.txt: learning WordPiece pieces from text (build_vocab),
in the layout of Google's releases, written whole."""

from absl import logging

from bert_tf.files import atomic_outputs
from bert_tf.wordpiece.rules import (BRACKETED_TOKEN, PAD_TOKEN,
                                     SPECIAL_TOKENS)
from bert_tf.wordpiece.tokenizer import BasicTokenizer

# 99 [unused*] tokens put [UNK], [CLS], [SEP], [MASK] at ids 100-103 as in
# every released vocabulary, and leave room to add tokens without resizing.
DEFAULT_NUM_UNUSED = 99


def release_layout(pieces, num_unused=DEFAULT_NUM_UNUSED):
  """[PAD], [unused0..num_unused-1], [UNK], [CLS], [SEP], [MASK], pieces.

  Pieces keep their order; repeats and the reserved tokens are dropped.
  """
  tokens = [PAD_TOKEN, *(f"[unused{i}]" for i in range(num_unused)),
            *SPECIAL_TOKENS]
  return list(dict.fromkeys([*tokens, *pieces]))


def write_vocab(tokens, path):
  """Writes vocab.txt, one token per line, under a temporary name then
  renamed, so that a reader never sees half a vocabulary."""
  tokens = list(tokens)
  for index, token in enumerate(tokens):
    # load_vocab strips each line: such a token could not be read back.
    if not token or token != token.strip() or "\n" in token or "\r" in token:
      raise ValueError(f"{path}: token {index} ({token!r}) is empty or has "
                       f"surrounding whitespace or a line break")
  if len(set(tokens)) != len(tokens):
    repeated = next(token for token in tokens if tokens.count(token) > 1)
    raise ValueError(f"{path}: token {repeated!r} repeats; ids would clash")
  with atomic_outputs.atomic_write(path) as writer:
    writer.write("".join(f"{token}\n" for token in tokens))


def learn_vocab(lines, vocab_size, do_lower_case=True,
                num_unused=DEFAULT_NUM_UNUSED, min_count=10, slack_ratio=0.05,
                num_iterations=4, max_unique_chars=1000):
  """Learns WordPiece pieces from text, returned in the release layout.

  Each line is split with BasicTokenizer(do_lower_case), the
  exact splitting FullTokenizer applies before WordPiece, then tensorflow-text's
  learner (bert_vocab_from_dataset) picks the pieces, lower-casing nothing
  more. Same lines and arguments, same vocabulary.

  Args:
    lines: an iterable of text lines.
    vocab_size: the largest size wanted, special tokens included.
    do_lower_case: as the model's do_lower_case.
    num_unused: how many [unused*] tokens to reserve.
    min_count: a multi-character piece must occur at least this often; on
      small text this, not vocab_size, limits the size.
    slack_ratio: the learner stops once within this fraction below vocab_size.
    num_iterations: the learner's refinement passes.
    max_unique_chars: the most single characters kept; words with rarer
      characters are not learned from (they tokenize to [UNK]).

  Returns:
    The vocabulary tokens, in id order.
  """
  basic_tokenizer = BasicTokenizer(do_lower_case=do_lower_case)
  words = [" ".join(basic_tokenizer.tokenize(line)) for line in lines]
  words = [line for line in words if line]
  if not words:
    raise ValueError("no words in the input text")
  reserved = release_layout([], num_unused)
  max_unique_chars = _character_budget(words, vocab_size, len(reserved),
                                       max_unique_chars)
  # Imported here: reading and checking a vocabulary needs no TensorFlow.
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from tensorflow_text.tools.wordpiece_vocab import (  # pylint: disable=g-import-not-at-top
      bert_vocab_from_dataset)
  dataset = tf.data.Dataset.from_tensor_slices(words).batch(1024)
  pieces = bert_vocab_from_dataset.bert_vocab_from_dataset(
      dataset, vocab_size, reserved,
      bert_tokenizer_params={"lower_case": False},
      learn_params={"lower_thresh": min_count, "slack_ratio": slack_ratio,
                    "num_iterations": num_iterations,
                    "max_unique_chars": max_unique_chars})
  tokens = _trim(release_layout(pieces, num_unused), vocab_size)
  if len(tokens) < (1 - slack_ratio) * vocab_size:
    logging.warning(
        "Learned %d tokens of the %d wanted: too few pieces in the text occur "
        "min_count=%d times.", len(tokens), vocab_size, min_count)
  return tokens


def _character_budget(words, vocab_size, num_reserved, max_unique_chars):
  """How many characters the learner may keep so that vocab_size holds them.

  Every kept character takes two tokens, "c" and "##c", which _trim never
  drops (every word keeps a spelling), so a text with more characters than
  half the room after the special tokens would overflow vocab_size. The
  learner keeps the most frequent ones; words with the others become [UNK].

  Raises:
    ValueError: vocab_size leaves no room for a single character.
  """
  room = (vocab_size - num_reserved) // 2
  if room < 1:
    raise ValueError(f"vocab_size {vocab_size} leaves no room for characters "
                     f"after the {num_reserved} special tokens")
  characters = len({char for word in words for char in word
                    if not char.isspace()})
  if min(characters, max_unique_chars) > room:
    logging.warning(
        "vocab_size %d holds %d of the %d characters in the text (each takes "
        "two tokens, c and ##c, after the %d special tokens); words with the "
        "%d rarest become [UNK]. A vocab_size of %d would keep them all.",
        vocab_size, room, characters, num_reserved, characters - room,
        num_reserved + 2 * characters)
  return min(room, max_unique_chars)


def _trim(tokens, vocab_size):
  """Drops the rarest multi-character pieces past vocab_size, which the
  learner's threshold search can overshoot. It lists pieces by falling count,
  so these are the last ones; single characters stay so that every word keeps
  a spelling."""
  excess = len(tokens) - vocab_size
  kept = []
  for token in reversed(tokens):
    droppable = (len(token.removeprefix("##")) > 1
                 and not BRACKETED_TOKEN.fullmatch(token))
    if excess > 0 and droppable:
      excess -= 1
    else:
      kept.append(token)
  return kept[::-1]
