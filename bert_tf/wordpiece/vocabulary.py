"""vocab.txt files: the release layout, learning one, and telling cased from
uncased by content (or, for a tokenizer.json, by what its normalizer says).

A model only works with the casing its vocabulary was built for, and the
original could only tell that from a released checkpoint's directory name
(tokenization.validate_case_matches_checkpoint). Here the vocabulary itself is
judged: an official Google vocabulary by its md5 (vocab/official_vocabularies
.json), any other by whether its pieces could survive lower-casing.
"""

import dataclasses
import functools
import hashlib
import importlib.resources
import json
import os
import re
import unicodedata

from absl import logging

from bert_tf import tokenization
from bert_tf.files import atomic_outputs, storage
from bert_tf.wordpiece.rules import (PAD_TOKEN, SPECIAL_TOKENS,
                                       check_casing, check_special_tokens,
                                       read_vocabulary)
from bert_tf.wordpiece.tokenizer_json import is_tokenizer_json

# 99 [unused*] tokens put [UNK], [CLS], [SEP], [MASK] at ids 100-103 as in
# every released vocabulary, and leave room to add tokens without resizing.
DEFAULT_NUM_UNUSED = 99

# A vocabulary is judged cased when more than this fraction of its pieces
# that contain a letter would be changed by do_lower_case's lower-casing and
# accent stripping, i.e. could never be matched with do_lower_case=True. The
# official uncased vocabularies score 0 to 0.0001, the cased ones 0.32 to 0.34.
CASED_FRACTION = 0.01
# Special tokens ([CLS], [unused12], <S>) say nothing about casing.
_BRACKETED = re.compile(r"\[[^\]]+\]|<[^>]+>")

_VOCAB_PACKAGE = "bert_tf.vocab_files"
_MANIFEST = "official_vocabularies.json"
_DEMO_VOCAB = "demo_uncased_vocab.txt"


@dataclasses.dataclass(frozen=True)
class OfficialVocab:
  """One vocabulary Google released; md5 is None where not measured here."""
  name: str
  size: int
  md5: str | None
  lower_cased: bool
  models: tuple[str, ...] = ()


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


def check_vocab_fits(vocab_file, vocab_size, config_file):
  """Raises ValueError when vocab_file has ids past the config's vocab_size,
  or lacks [UNK], [CLS] or [SEP].

  Such ids fail on CPUs only once training meets them, and on GPUs silently
  look up zeros; checked with the flags, they cost nothing. A vocabulary
  without the tokens every program looks up is refused too
  (tokenization_rules.check_special_tokens).
  """
  vocab = tokenization.load_vocab(vocab_file)
  check_special_tokens(vocab, vocab_file)
  size = max(vocab.values(), default=-1) + 1
  if size > vocab_size:
    raise ValueError(
        f"{vocab_file}: {size} tokens, but vocab_size in {config_file} is "
        f"{vocab_size}; ids past the embedding table cannot be looked up "
        f"(is this the vocabulary the model was made with?)")


def learn_vocab(lines, vocab_size, do_lower_case=True,
                num_unused=DEFAULT_NUM_UNUSED, min_count=10, slack_ratio=0.05,
                num_iterations=4, max_unique_chars=1000):
  """Learns WordPiece pieces from text, returned in the release layout.

  Each line is split with tokenization.BasicTokenizer(do_lower_case), the
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
  basic_tokenizer = tokenization.BasicTokenizer(do_lower_case=do_lower_case)
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
                 and not _BRACKETED.fullmatch(token))
    if excess > 0 and droppable:
      excess -= 1
    else:
      kept.append(token)
  return kept[::-1]


@functools.lru_cache(maxsize=None)
def official_vocabularies():
  """The manifest vocab/official_vocabularies.json, as OfficialVocab."""
  text = importlib.resources.files(_VOCAB_PACKAGE).joinpath(
      _MANIFEST).read_text(encoding="utf-8")
  return tuple(OfficialVocab(**{**entry, "models": tuple(entry["models"])})
               for entry in json.loads(text)["vocabularies"])


def file_md5(path):
  """Hex md5 of a file's bytes."""
  digest = hashlib.md5()
  with storage.open_file(path, "rb") as reader:
    for block in iter(lambda: reader.read(1 << 20), b""):
      digest.update(block)
  return digest.hexdigest()


def identify_official_vocab(vocab_file):
  """The OfficialVocab whose md5 vocab_file has, or None."""
  md5 = file_md5(vocab_file)
  return next((entry for entry in official_vocabularies()
               if entry.md5 == md5), None)


def looks_lower_cased(tokens):
  """Whether tokens look built from lower-cased, accent-stripped text.

  Counts the pieces (without "##", special tokens skipped) that contain a
  letter or mark, and those among them that do_lower_case=True text could
  never match because lower-casing or accent stripping changes them. Cased
  when the latter are more than CASED_FRACTION of the former.
  """
  return _counts_look_lower_cased(*_casing_counts(tokens))


def _counts_look_lower_cased(changed, with_letters):
  return changed <= CASED_FRACTION * with_letters


def _casing_counts(tokens):
  """(pieces lower-casing changes, pieces with a letter or mark)."""
  lower_case = tokenization.BasicTokenizer(do_lower_case=True)
  changed = with_letters = 0
  for token in tokens:
    if _BRACKETED.fullmatch(token):
      continue
    piece = token.removeprefix("##")
    if not any(unicodedata.category(char)[0] in "LM" for char in piece):
      continue
    with_letters += 1
    if piece.isascii() and not any(char.isupper() for char in piece):
      continue  # fast path: nothing for lower-casing to change
    if "".join(lower_case.tokenize(piece)) != piece:
      changed += 1
  return changed, with_letters


def _judge_casing(vocab_file):
  """(lower_cased, what the vocabulary looks like) for messages."""
  if is_tokenizer_json(vocab_file):
    lower_cased = read_vocabulary(vocab_file).lower_case
    return lower_cased, f"normalizer.lowercase is {lower_cased}"
  entry = identify_official_vocab(vocab_file)
  if entry is not None:
    kind = "uncased" if entry.lower_cased else "cased"
    return entry.lower_cased, f"the official {kind} vocabulary {entry.name}"
  tokens = list(tokenization.load_vocab(vocab_file))
  changed, with_letters = _casing_counts(tokens)
  lower_cased = _counts_look_lower_cased(changed, with_letters)
  kind = "lower-cased" if lower_cased else "cased"
  return lower_cased, (f"a {kind} vocabulary ({changed} of {with_letters} "
                       f"pieces with letters have upper case or accents)")


def vocab_is_lower_cased(vocab_file):
  """Whether vocab_file was built for do_lower_case=True, judged by content:
  a tokenizer.json's normalizer, the manifest for an official vocabulary,
  looks_lower_cased otherwise."""
  return _judge_casing(vocab_file)[0]


def model_casing(tokenizer_files, vocab_file, do_lower_case):
  """A model directory's casing for a program: (do_lower_case, where it
  came from). The program's own where given (do_lower_case not None; where
  None), which the directory's tokenizer files
  (tokenizer_json.FolderTokenizer) must not contradict; else theirs; else
  what vocab_file shows; without one, the original's default, True (where
  None)."""
  if do_lower_case is not None:
    tokenizer_files.check_casing(do_lower_case)
    return do_lower_case, None
  if tokenizer_files.do_lower_case is not None:
    return tokenizer_files.do_lower_case, f"from {tokenizer_files.where_said}"
  if vocab_file:
    return vocab_is_lower_cased(vocab_file), f"as {vocab_file} shows"
  return True, None


def check_do_lower_case(vocab_file, do_lower_case, init_checkpoint=None):
  """The original's checkpoint-name check (raises), then a warning when
  do_lower_case contradicts the vocabulary's content (an error for a
  tokenizer.json, which says its casing).

  Returns:
    Whether the vocabulary is lower-cased, as vocab_is_lower_cased.
  """
  tokenization.validate_case_matches_checkpoint(do_lower_case, init_checkpoint)
  lower_cased, looks_like = _judge_casing(vocab_file)
  if lower_cased != bool(do_lower_case) and is_tokenizer_json(vocab_file):
    check_casing(read_vocabulary(vocab_file), vocab_file, do_lower_case)
  if lower_cased != bool(do_lower_case):
    logging.warning(
        "%s is %s, but do_lower_case=%s: pass --do_lower_case=%s, or words "
        "will not match its pieces and become [UNK] or split oddly.",
        vocab_file, looks_like, bool(do_lower_case), lower_cased)
  return lower_cased


def demo_vocab_file():
  """Path of vocab/demo_uncased_vocab.txt, the project's own small vocabulary
  (pip installs packages unpacked, so it is a real file)."""
  return os.fspath(
      importlib.resources.files(_VOCAB_PACKAGE).joinpath(_DEMO_VOCAB))
