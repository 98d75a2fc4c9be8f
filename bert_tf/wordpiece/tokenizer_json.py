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

from bert_tf.files import storage
from bert_tf.files.input_checks import decode_utf8
from bert_tf.files.json_files import parse_json_object, read_json_object

TOKENIZER_FILE = "tokenizer.json"
TOKENIZER_CONFIG_FILE = "tokenizer_config.json"
# transformers writes int(1e30) as model_max_length where none was set.
_UNSET_MAX_LENGTH = 1e29
_WORD_PIECE_PREFIX = "##"
_UNK_TOKEN = "[UNK]"  # rules.UNK_TOKEN, which imports this
# An AddedToken's matching options that bert_tf does not reproduce.
_ADDED_TOKEN_FLAGS = ("lstrip", "rstrip", "single_word", "normalized")
# tokenizer_config.json's fields naming special tokens, and the only tokens
# bert_tf reads there (rules' *_TOKEN, which imports this).
_NAMED_TOKENS = {"pad_token": "[PAD]", "unk_token": _UNK_TOKEN,
                 "cls_token": "[CLS]", "sep_token": "[SEP]",
                 "mask_token": "[MASK]"}
_EXTRA_SPECIAL_TOKENS = ("additional_special_tokens", "extra_special_tokens")
_VOCAB_TXT = "vocab.txt"


@dataclasses.dataclass(frozen=True)
class TokenizerJson:
  """What bert_tf takes from a tokenizer.json (rules.Vocabulary holds the
  same for any vocabulary file).

  Attributes:
    vocab: {token: id}, in id order (ids 0..N-1).
    max_input_chars_per_word: longer words become [UNK].
    lower_case: whether the normalizer lower-cases and strips accents; None
      for a vocab.txt, which does not say.
    added_tokens: the special tokens transformers keeps whole in text.
  """
  vocab: dict
  max_input_chars_per_word: int
  lower_case: object = None
  added_tokens: tuple = ()


@dataclasses.dataclass(frozen=True)
class TokenizerConfig:
  """tokenizer_config.json's settings; None where it does not say.

  Attributes:
    added_tokens: added_tokens_decoder's tokens, which transformers follows
      instead of a tokenizer.json's added_tokens; None where it has none.
    extra_special_tokens: the further special tokens it names.
  """
  do_lower_case: object = None
  strip_accents: object = None
  model_max_length: object = None
  added_tokens: object = None
  extra_special_tokens: tuple = ()


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
  added_tokens = _special_tokens(values.get("added_tokens") or [], vocab,
                                 f"{path}: added_tokens")
  limit = model.get("max_input_chars_per_word")
  if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
    raise ValueError(f"{path}: model.max_input_chars_per_word is "
                     f"{limit!r}; expected a positive integer")
  return TokenizerJson(vocab, limit, lower_case, added_tokens)


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


def _special_tokens(added_tokens, vocab, where):
  """The contents of added tokens (a list of AddedToken's fields, `where`
  naming it), checked to be what bert_tf keeps whole as transformers does:
  special tokens of the vocabulary (bert_tf looks them up there), matched
  as written (not normalized) wherever they are (no lstrip, rstrip or
  single_word). Others would be split off before WordPiece, which bert_tf
  does not do."""
  if not isinstance(added_tokens, list) or not all(
      isinstance(token, dict) for token in added_tokens):
    raise ValueError(f"{where} is not a list of objects")
  for index, token in enumerate(added_tokens):
    content = _special_token(token, f"{where}[{index}]")
    if vocab.get(content) != token.get("id"):
      raise ValueError(f"{where}[{index}] ({content!r}) has id "
                       f"{token.get('id')}, but model.vocab gives it "
                       f"{vocab.get(content)}")
  return tuple(token["content"] for token in added_tokens)


def _special_token(token, where):
  """The content of an AddedToken's fields, checked to be special and
  matched as written (its flags false, as AddedToken's defaults for a
  special token)."""
  content = token.get("content")
  if not isinstance(content, str) or not content:
    raise ValueError(f"{where}: its content is {content!r}; expected a "
                     f"non-empty string")
  if token.get("special") is not True:
    raise ValueError(f"{where} ({content!r}) is not special; bert_tf "
                     f"tokenizes it with WordPiece")
  _check_flags(token, where)
  return content


def _check_flags(token, where):
  """Raises ValueError unless an AddedToken's fields leave its matching
  options false (their default for a special token)."""
  for flag in _ADDED_TOKEN_FLAGS:
    if token.get(flag, False) is not False:
      raise ValueError(f"{where} ({token.get('content')!r}) has {flag} "
                       f"{token[flag]!r}; bert_tf keeps special tokens whole "
                       f"as written, with every flag false")


def read_tokenizer_config(path):
  """tokenizer_config.json as TokenizerConfig (tokenizer_config)."""
  return tokenizer_config(read_json_object(path), path)


def tokenizer_config(values, path):
  """tokenizer_config.json's parsed object as TokenizerConfig; raises
  ValueError naming the file and field where bert_tf cannot tokenize as it
  says."""
  if values.get("tokenize_chinese_chars") is False:
    raise ValueError(f"{path}: tokenize_chinese_chars is false; bert_tf "
                     f"always splits CJK characters (as the original)")
  do_lower_case = _lower_case(values, ("do_lower_case", "strip_accents"),
                              path)
  special_tokens = _config_special_tokens(values, path)
  return TokenizerConfig(_bool_or_none(do_lower_case),
                         _bool_or_none(values.get("strip_accents")),
                         _model_max_length(values, path), *special_tokens)


# The shortest max length: room for [CLS], a token and [SEP].
MIN_MAX_LENGTH = 3


def _model_max_length(values, path):
  """model_max_length, None where unset (absent, null, or transformers'
  1e30); raises ValueError, naming the file, for one that is no integer of
  at least 3 (room for [CLS], a token and [SEP]): transformers'
  tokenizers fail on "24" or 24.0 (sentence-transformers refuses the
  folder)."""
  length = values.get("model_max_length")
  if length is None or (isinstance(length, (int, float)) and
                        length >= _UNSET_MAX_LENGTH):
    return None
  if isinstance(length, bool) or not isinstance(length, int) or \
      length < MIN_MAX_LENGTH:
    raise ValueError(f"{path}: model_max_length is {length!r}; expected an "
                     f"integer of at least {MIN_MAX_LENGTH}")
  return length


def _bool_or_none(value):
  return value if isinstance(value, bool) else None


def _config_special_tokens(values, path):
  """tokenizer_config.json's (added_tokens, extra_special_tokens) of
  TokenizerConfig, its named special tokens checked to be BERT's."""
  for field, token in _NAMED_TOKENS.items():
    value = values.get(field, token)
    if _content(value) != token:
      raise ValueError(f"{path}: {field} is {_content(value)!r}; bert_tf's "
                       f"BERT tokenizer has {token!r}")
    if isinstance(value, dict):
      _check_flags(value, f"{path}: {field}")
  decoder = values.get("added_tokens_decoder")
  if decoder is not None and not (isinstance(decoder, dict) and all(
      isinstance(token, dict) for token in decoder.values())):
    raise ValueError(f"{path}: added_tokens_decoder is not an object of "
                     f"objects")
  added = None if decoder is None else tuple(
      _special_token(token, f"{path}: added_tokens_decoder[{key!r}]")
      for key, token in decoder.items())
  extra = []
  for field in _EXTRA_SPECIAL_TOKENS:
    tokens = values.get(field) or []
    if isinstance(tokens, dict):  # transformers 5's {name: token}
      tokens = list(tokens.values())
    contents = list(map(_content, tokens)) if isinstance(tokens, list) \
        else None
    if contents is None or not all(isinstance(token, str)
                                   for token in contents):
      raise ValueError(f"{path}: {field} is not a list of tokens")
    extra.extend(contents)
  return added, tuple(extra)


def _content(token):
  """A special token as tokenizer_config.json gives it: a string, or an
  AddedToken's fields."""
  return token.get("content") if isinstance(token, dict) else token


def _check_kept_whole(folder, find_file, files, config, settings):
  """Raises ValueError, naming the file, where transformers would keep
  other special tokens whole in text than bert_tf: BERT's named ones, and
  a tokenizer.json's added tokens where it reads that file as the
  vocabulary (a folder with no vocab.txt). transformers takes
  tokenizer_config.json's added_tokens_decoder where it has one, else
  tokenizer.json's added_tokens, and the extra special tokens the config
  names. files: (tokenizer.json, tokenizer_config.json), either None."""
  tokenizer_file, config_file = files
  named = set(_NAMED_TOKENS.values())
  in_json = settings.added_tokens if settings else ()
  added = in_json if config.added_tokens is None else config.added_tokens
  theirs = set(added).union(config.extra_special_tokens) - named
  ours = set(in_json) - named if settings and \
      find_file(folder, _VOCAB_TXT) is None else set()
  unkept = sorted(theirs - ours, key=str)
  if unkept:
    where = tokenizer_file if unkept[0] in in_json else config_file
    raise ValueError(
        f"{where}: {unkept[0]!r} is a special token, which transformers "
        f"keeps whole in text; bert_tf keeps whole "
        f"{', '.join(_NAMED_TOKENS.values())} and a tokenizer.json's added "
        f"tokens where it is the vocabulary (no {_VOCAB_TXT} beside it)")
  unsaid = sorted(ours - theirs)
  if unsaid:
    raise ValueError(
        f"{tokenizer_file}: added token {unsaid[0]!r} is not in "
        f"{config_file}'s added_tokens_decoder, which transformers follows; "
        f"the two files must agree")


@dataclasses.dataclass(frozen=True, kw_only=True)
class FolderTokenizer:
  """A model folder's tokenizer files, read and checked to agree.

  Attributes:
    tokenizer_file: its tokenizer.json, or None.
    settings: that file's TokenizerJson, or None.
    config_file: its tokenizer_config.json, or None.
    do_lower_case: tokenizer.json's normalizer's, else tokenizer_config
      .json's, else None; with where_said, the file that says it.
    model_max_length: tokenizer_config.json's, None where unset.
    tokenizer_data, config_data: tokenizer.json's and
      tokenizer_config.json's bytes as read, or None: what a copy of each
      writes, without reading it again.
  """
  tokenizer_file: object
  settings: object
  config_file: object
  do_lower_case: object
  where_said: object
  model_max_length: object
  tokenizer_data: object = None
  config_data: object = None

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
  settings = tokenizer_data = config_data = None
  config = TokenizerConfig()
  if tokenizer_file:
    tokenizer_data, values = _json_file(tokenizer_file)
    settings = tokenizer_settings(values, tokenizer_file)
  if config_file:
    config_data, values = _json_file(config_file)
    config = tokenizer_config(values, config_file)
  _check_kept_whole(folder, find_file, (tokenizer_file, config_file), config,
                    settings)
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
  return FolderTokenizer(tokenizer_file=tokenizer_file, settings=settings,
                         config_file=config_file, do_lower_case=do_lower_case,
                         where_said=where,
                         model_max_length=config.model_max_length,
                         tokenizer_data=tokenizer_data,
                         config_data=config_data)


def _json_file(path):
  """(its bytes, its JSON object) of a file read once: a copy of it
  writes the bytes, without reading it again."""
  with storage.open_file(path, "rb") as reader:
    data = reader.read()
  return data, parse_json_object(decode_utf8(data, path), path)
