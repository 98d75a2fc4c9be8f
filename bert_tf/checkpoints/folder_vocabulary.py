"""A model directory's vocabulary: vocab.txt, else its tokenizer.json,
read once (rules.Vocabulary), and the two checked to agree where it has
both."""

from bert_tf.files.model_files import model_file, required_model_file
from bert_tf.wordpiece import rules, tokenizer_json

VOCAB_FILE = "vocab.txt"


def vocabulary_of(directory):
  """(its vocabulary as rules.Vocabulary, its tokenizer files as
  tokenizer_json.FolderTokenizer) of a model directory, its checkpoint left
  unopened: what a program that only tokenizes takes from one."""
  tokenizer = tokenizer_json.read_folder(directory, model_file)
  return vocabulary_in(directory, tokenizer, True), tokenizer


def vocabulary_in(directory, tokenizer, needs_vocab):
  """vocab.txt where the directory has one, else its tokenizer.json, read
  (rules.Vocabulary); None for neither unless needs_vocab. Where it has
  both, they must hold the same tokens in the same order (else which one
  is the model's?)."""
  vocab_file = model_file(directory, VOCAB_FILE)
  if vocab_file is None:
    vocab_file = tokenizer.tokenizer_file
  if vocab_file is None:
    if needs_vocab:
      required_model_file(
          directory, VOCAB_FILE, f"a BERT model directory has its "
          f"{VOCAB_FILE} (or a {tokenizer_json.TOKENIZER_FILE})")
    return None
  if vocab_file == tokenizer.tokenizer_file:  # read already
    return rules.tokenizer_json_vocabulary(
        vocab_file, tokenizer.tokenizer_data, tokenizer.settings)
  vocab = rules.read_vocabulary(vocab_file)
  if tokenizer.settings:
    _check_same_tokens(vocab, tokenizer)
  return vocab


def _check_same_tokens(vocab, tokenizer):
  """Raises ValueError, naming both files, where vocab.txt's {token: id}
  (`vocab`, a rules.Vocabulary) is not the tokenizer.json's."""
  vocab_file = vocab.path
  tokens = list(vocab.vocab.items())
  others = list(tokenizer.settings.vocab.items())
  if tokens != others:
    index = next((index for index, (token, other) in
                  enumerate(zip(tokens, others)) if token != other),
                 min(len(tokens), len(others)))
    raise ValueError(
        f"{vocab_file} and {tokenizer.tokenizer_file} hold different "
        f"vocabularies ({len(tokens)} and {len(others)} tokens, first "
        f"differing at line {index + 1}); a model has one")
