"""tokenizer.json and tokenizer_config.json, the tokenizer files
transformers 5 saves (with no vocab.txt).

bert_tf tokenizes as the original BERT tokenizer does, so it reads a
tokenizer.json only where that tokenizer is what it describes: a WordPiece
model behind BertNormalizer and BertPreTokenizer, with the original's
cleaning and CJK splitting, accents stripped exactly when text is
lower-cased, "##" continuations and no added non-special tokens. Anything
else is refused, naming the file and the field, rather than tokenized
differently from transformers. No TensorFlow here: the tokenizers (which
import none) read vocabularies through this module.
"""

import dataclasses
import os

from bert_tf.files.json_files import read_json_object

TOKENIZER_FILE = "tokenizer.json"
TOKENIZER_CONFIG_FILE = "tokenizer_config.json"
# transformers writes int(1e30) as model_max_length where none was set.
_UNSET_MAX_LENGTH = 1e29
_WORD_PIECE_PREFIX = "##"
_UNK_TOKEN = "[UNK]"  # rules.UNK_TOKEN, which imports this


@dataclasses.dataclass(frozen=True)
class TokenizerJson:
  """What bert_tf takes from a tokenizer.json (rules.Vocabulary holds the
  same for any vocabulary file).

  Attributes:
    vocab: {token: id}, in id order (ids 0..N-1).
    max_input_chars_per_word: longer words become [UNK].
    lower_case: whether the normalizer lower-cases and strips accents; None
      for a vocab.txt, which does not say.
  """
  vocab: dict
  max_input_chars_per_word: int
  lower_case: object = None


@dataclasses.dataclass(frozen=True)
class TokenizerConfig:
  """tokenizer_config.json's settings; None where it does not say."""
  do_lower_case: object = None
  strip_accents: object = None
  model_max_length: object = None


def is_tokenizer_json(path):
  """Whether a vocabulary file is a tokenizer.json (by its name: *.json)
  rather than a vocab.txt."""
  return os.fspath(path).endswith(".json")


def _section(values, key, kind, path):
  """values[key], which must be an object of type `kind`."""
  section = values.get(key)
  found = section.get("type") if isinstance(section, dict) else section
  if found != kind:
    raise ValueError(f"{path}: {key}.type is {found!r}; bert_tf reads "
                     f"{kind} only (the original BERT tokenizer)")
  return section


def _lower_case(values, fields, path, scope=""):
  """The one casing bert_tf can follow, from the values of `fields`
  (lowercase, strip_accents): strip_accents None follows lowercase, as in
  transformers; any other mix is refused."""
  lowercase, strip_accents = (values.get(field) for field in fields)
  if strip_accents not in (None, lowercase) and isinstance(lowercase, bool):
    raise ValueError(
        f"{path}: {scope}{fields[0]} {lowercase} with {scope}{fields[1]} "
        f"{strip_accents}; bert_tf strips accents exactly when it "
        f"lower-cases (as the original)")
  return lowercase


def read_tokenizer_json(path):
  """A tokenizer.json as TokenizerJson (see tokenizer_settings)."""
  return tokenizer_settings(read_json_object(path), path)


def tokenizer_settings(values, path):
  """A tokenizer.json's parsed object as TokenizerJson; raises ValueError,
  in one line naming the file and the field, where bert_tf cannot
  reproduce it."""
  model = _section(values, "model", "WordPiece", path)
  _section(values, "pre_tokenizer", "BertPreTokenizer", path)
  normalizer = _section(values, "normalizer", "BertNormalizer", path)
  for key in ("clean_text", "handle_chinese_chars"):
    if normalizer.get(key) is not True:
      raise ValueError(f"{path}: normalizer.{key} is "
                       f"{normalizer.get(key)!r}; bert_tf always does it "
                       f"(as the original)")
  lower_case = bool(_lower_case(normalizer, ("lowercase", "strip_accents"),
                                path, "normalizer."))
  prefix = model.get("continuing_subword_prefix")
  if prefix != _WORD_PIECE_PREFIX:
    raise ValueError(f"{path}: model.continuing_subword_prefix is "
                     f"{prefix!r}; bert_tf reads {_WORD_PIECE_PREFIX!r}")
  vocab = _vocab(model.get("vocab"), path)
  unk_token = model.get("unk_token")
  if unk_token != _UNK_TOKEN or unk_token not in vocab:
    raise ValueError(f"{path}: model.unk_token is {unk_token!r}; bert_tf "
                     f"reads {_UNK_TOKEN!r}, a token of model.vocab")
  _check_added_tokens(values.get("added_tokens") or [], vocab, path)
  limit = model.get("max_input_chars_per_word")
  if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
    raise ValueError(f"{path}: model.max_input_chars_per_word is "
                     f"{limit!r}; expected a positive integer")
  return TokenizerJson(vocab, limit, lower_case)


def _vocab(vocab, path):
  """model.vocab in id order, checked to number its tokens 0..N-1 (as a
  vocab.txt's lines do)."""
  if not isinstance(vocab, dict) or not vocab:
    raise ValueError(f"{path}: model.vocab is not a {{token: id}} object "
                     f"with tokens")
  ids = list(vocab.values())
  if not all(type(index) is int for index in ids) or \
      sorted(ids) != list(range(len(ids))):
    raise ValueError(f"{path}: model.vocab's ids are not 0..{len(vocab) - 1}, "
                     f"each once")
  return dict(sorted(vocab.items(), key=lambda item: item[1]))


def _check_added_tokens(added_tokens, vocab, path):
  """Special added tokens must be vocabulary tokens (bert_tf looks them up
  there); others would be split off before WordPiece, which bert_tf does
  not do."""
  for index, token in enumerate(added_tokens):
    content = token.get("content")
    if token.get("special") is not True:
      raise ValueError(f"{path}: added_tokens[{index}] ({content!r}) is not "
                       f"special; bert_tf tokenizes it with WordPiece")
    if vocab.get(content) != token.get("id"):
      raise ValueError(f"{path}: added_tokens[{index}] ({content!r}) has id "
                       f"{token.get('id')}, but model.vocab gives it "
                       f"{vocab.get(content)}")


def read_tokenizer_config(path):
  """tokenizer_config.json as TokenizerConfig; raises ValueError naming the
  file and field where bert_tf cannot tokenize as it says."""
  values = read_json_object(path)
  if values.get("tokenize_chinese_chars") is False:
    raise ValueError(f"{path}: tokenize_chinese_chars is false; bert_tf "
                     f"always splits CJK characters (as the original)")
  do_lower_case = _lower_case(values, ("do_lower_case", "strip_accents"),
                              path)
  length = values.get("model_max_length")
  if not isinstance(length, (int, float)) or isinstance(length, bool) or \
      length >= _UNSET_MAX_LENGTH:
    length = None
  return TokenizerConfig(_bool_or_none(do_lower_case),
                         _bool_or_none(values.get("strip_accents")),
                         length and int(length))


def _bool_or_none(value):
  return value if isinstance(value, bool) else None


@dataclasses.dataclass(frozen=True)
class FolderTokenizer:
  """A model folder's tokenizer files, read and checked to agree.

  Attributes:
    tokenizer_file: its tokenizer.json, or None.
    settings: that file's TokenizerJson, or None.
    config_file: its tokenizer_config.json, or None.
    do_lower_case: tokenizer.json's normalizer's, else tokenizer_config
      .json's, else None; with where_said, the file that says it.
    model_max_length: tokenizer_config.json's, None where unset.
  """
  tokenizer_file: object
  settings: object
  config_file: object
  do_lower_case: object
  where_said: object
  model_max_length: object

  def check_casing(self, do_lower_case):
    """Raises ValueError where the files say another casing than
    do_lower_case (the --do_lower_case a program was given)."""
    said = self.do_lower_case
    if said is not None and said != bool(do_lower_case):
      raise ValueError(
          f"--do_lower_case={bool(do_lower_case)}, but {self.where_said} "
          f"says do_lower_case {said}: pass --do_lower_case={said}")


def read_folder(folder, find_file):
  """The tokenizer files of `folder` as FolderTokenizer.

  Args:
    find_file: (folder, name) -> the checked path of a file, or None
      (model_files.model_file).

  Raises:
    ValueError: a file bert_tf cannot follow, or a tokenizer_config.json
      whose do_lower_case contradicts tokenizer.json (naming both).
  """
  tokenizer_file = find_file(folder, TOKENIZER_FILE)
  config_file = find_file(folder, TOKENIZER_CONFIG_FILE)
  settings = tokenizer_file and read_tokenizer_json(tokenizer_file)
  config = read_tokenizer_config(config_file) if config_file else \
      TokenizerConfig()
  do_lower_case, where = config.do_lower_case, config_file
  if settings is not None:
    for field in ("do_lower_case", "strip_accents"):
      said = getattr(config, field)
      if said not in (None, settings.lower_case):
        raise ValueError(
            f"{config_file}: {field} {said}, but {tokenizer_file}'s "
            f"normalizer lower-cases: {settings.lower_case}; the two files "
            f"must agree")
    do_lower_case, where = settings.lower_case, tokenizer_file
  return FolderTokenizer(tokenizer_file, settings, config_file,
                         do_lower_case, where, config.model_max_length)
