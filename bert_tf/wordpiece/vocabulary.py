"""A run's vocabulary: whether it fits the model, which official release
it is, and its casing, all from one read (rules.Vocabulary).

A model only works with the casing its vocabulary was built for, and the
original could only tell that from a released checkpoint's directory name
(tokenization.validate_case_matches_checkpoint). Here the vocabulary itself
is judged too: an official Google vocabulary by its md5
(vocab/official_vocabularies.json), a tokenizer.json by what its normalizer
says, any other by whether its pieces could survive lower-casing.
"""

import dataclasses
import functools
import importlib.resources
import json
import os
import unicodedata

from absl import logging

from bert_tf.wordpiece.rules import (BRACKETED_TOKEN, check_special_tokens,
                                     check_stated_casing, read_vocabulary)
from bert_tf.wordpiece.tokenizer import (BasicTokenizer,
                                         validate_case_matches_checkpoint)

# A vocabulary is judged cased when more than this fraction of its pieces
# that contain a letter would be changed by do_lower_case's lower-casing and
# accent stripping, i.e. could never be matched with do_lower_case=True. The
# official uncased vocabularies score 0 to 0.0001, the cased ones 0.32 to 0.34.
CASED_FRACTION = 0.01

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


def check_vocab_fits(vocabulary, vocab_size, config_file):
  """Raises ValueError when a vocabulary (a path or a rules.Vocabulary) has
  ids past the config's vocab_size, or lacks [UNK], [CLS] or [SEP].

  Such ids fail on CPUs only once training meets them, and on GPUs silently
  look up zeros; checked with the flags, they cost nothing. A vocabulary
  without the tokens every program looks up is refused too
  (rules.check_special_tokens).
  """
  vocabulary = read_vocabulary(vocabulary)
  check_special_tokens(vocabulary.vocab, vocabulary.path)
  size = max(vocabulary.vocab.values(), default=-1) + 1
  if size > vocab_size:
    raise ValueError(
        f"{vocabulary.path}: {size} tokens, but vocab_size in {config_file} is "
        f"{vocab_size}; ids past the embedding table cannot be looked up "
        f"(is this the vocabulary the model was made with?)")


@functools.lru_cache(maxsize=None)
def official_vocabularies():
  """The manifest vocab/official_vocabularies.json, as OfficialVocab."""
  text = importlib.resources.files(_VOCAB_PACKAGE).joinpath(
      _MANIFEST).read_text(encoding="utf-8")
  return tuple(OfficialVocab(**{**entry, "models": tuple(entry["models"])})
               for entry in json.loads(text)["vocabularies"])


def official_vocab(vocabulary):
  """The OfficialVocab whose md5 `vocabulary` (a path or a rules.Vocabulary)
  has, or None."""
  md5 = read_vocabulary(vocabulary).md5
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
  lower_case = BasicTokenizer(do_lower_case=True)
  changed = with_letters = 0
  for token in tokens:
    if BRACKETED_TOKEN.fullmatch(token):
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


def judge_casing(vocabulary):
  """(lower_cased, what the vocabulary looks like, for messages) of a path
  or a rules.Vocabulary: a tokenizer.json's normalizer, the manifest for
  an official vocabulary, looks_lower_cased otherwise."""
  vocabulary = read_vocabulary(vocabulary)
  if vocabulary.is_tokenizer_json:
    lower_cased = vocabulary.lower_case
    return lower_cased, f"normalizer.lowercase is {lower_cased}"
  entry = official_vocab(vocabulary)
  if entry is not None:
    kind = "uncased" if entry.lower_cased else "cased"
    return entry.lower_cased, f"the official {kind} vocabulary {entry.name}"
  changed, with_letters = _casing_counts(vocabulary.vocab)
  lower_cased = _counts_look_lower_cased(changed, with_letters)
  kind = "lower-cased" if lower_cased else "cased"
  return lower_cased, (f"a {kind} vocabulary ({changed} of {with_letters} "
                       f"pieces with letters have upper case or accents)")


def vocab_is_lower_cased(vocabulary):
  """Whether a vocabulary (a path or a rules.Vocabulary) was built for
  do_lower_case=True, judged by content (judge_casing)."""
  return judge_casing(vocabulary)[0]


def model_casing(tokenizer_files, vocabulary, do_lower_case):
  """A model directory's casing for a program: (do_lower_case, where it
  came from). The program's own where given (do_lower_case not None; where
  None; check_casing checks it); else what the directory's tokenizer files
  (tokenizer_json.FolderTokenizer) say; else what the vocabulary shows;
  without one, the original's default, True (where None)."""
  if do_lower_case is not None:
    return do_lower_case, None
  if tokenizer_files.do_lower_case is not None:
    return tokenizer_files.do_lower_case, f"from {tokenizer_files.where_said}"
  if vocabulary:
    vocabulary = read_vocabulary(vocabulary)
    return vocab_is_lower_cased(vocabulary), f"as {vocabulary.path} shows"
  return True, None


def check_casing(vocabulary, do_lower_case, init_checkpoint=None,
                 tokenizer_files=None):
  """The one check of a program's do_lower_case against its model.

  Raises ValueError where a file or a name states the casing and
  do_lower_case contradicts it: a tokenizer.json's normalizer, the model
  folder's tokenizer files (tokenizer_json.FolderTokenizer), a released
  checkpoint's name (the original's rule). Warns where only the
  vocabulary's content shows the other casing (an official vocabulary's
  md5, or its pieces), which a user may mean.

  Args:
    vocabulary: a path or a rules.Vocabulary.

  Returns:
    Whether the vocabulary is lower-cased, as vocab_is_lower_cased.
  """
  vocabulary = read_vocabulary(vocabulary)
  if tokenizer_files is not None:
    tokenizer_files.check_casing(do_lower_case)
  validate_case_matches_checkpoint(do_lower_case, init_checkpoint)
  check_stated_casing(vocabulary, do_lower_case)
  lower_cased, looks_like = judge_casing(vocabulary)
  if lower_cased != bool(do_lower_case):
    logging.warning(
        "%s is %s, but do_lower_case=%s: pass --do_lower_case=%s, or words "
        "will not match its pieces and become [UNK] or split oddly.",
        vocabulary.path, looks_like, bool(do_lower_case), lower_cased)
  return lower_cased


def demo_vocab_file():
  """Path of vocab/demo_uncased_vocab.txt, the project's own small vocabulary
  (pip installs packages unpacked, so it is a real file)."""
  return os.fspath(
      importlib.resources.files(_VOCAB_PACKAGE).joinpath(_DEMO_VOCAB))
