"""The original's tokenizer flags, the same in every script that reads text:
create_pretraining_data and the fine-tuning scripts. No TensorFlow here."""

from absl import flags, logging

from bert_tf.checkpoints import folder_vocabulary
from bert_tf.files import storage
from bert_tf.wordpiece import vocabulary

flags.DEFINE_string(
    "vocab_file", None,
    "The vocabulary file that the BERT model was trained on (vocab.txt, or a "
    "Hugging Face tokenizer.json), or a model directory holding one. "
    "Default: the model directory's, where --init_checkpoint names one.")
flags.DEFINE_bool(
    "do_lower_case", True,
    "Whether to lower case the input text. Should be True for uncased "
    "models and False for cased models. Default: the model directory's "
    "casing, where --init_checkpoint names one, else True.")
FLAGS = flags.FLAGS


def do_lower_case():
  """--do_lower_case where it was given, else None: the model directory's
  casing then, where there is one (training.run_setup)."""
  return FLAGS.do_lower_case if FLAGS["do_lower_case"].present else None


def vocabulary_and_casing():
  """(vocabulary file, do_lower_case) of a program with no
  --init_checkpoint (create_pretraining_data): --vocab_file may name a
  model directory, which gives its vocabulary and, unless --do_lower_case
  is given (and agrees), its casing."""
  if not FLAGS.vocab_file or not storage.isdir(FLAGS.vocab_file):
    return FLAGS.vocab_file, FLAGS.do_lower_case
  try:
    vocab, tokenizer_files = folder_vocabulary.vocabulary_of(FLAGS.vocab_file)
  except FileNotFoundError:
    raise ValueError(f"--vocab_file={FLAGS.vocab_file} is a directory with "
                     f"no vocabulary (vocab.txt or tokenizer.json) in "
                     f"it") from None
  casing, where = vocabulary.model_casing(tokenizer_files, vocab,
                                          do_lower_case())
  vocabulary.check_casing(vocab, casing, tokenizer_files=tokenizer_files)
  if where is not None:
    logging.info("do_lower_case: %s (from --vocab_file=%s: %s)", casing,
                 FLAGS.vocab_file, where)
  logging.info("vocab_file: %s", vocab.path)
  return vocab.path, casing
