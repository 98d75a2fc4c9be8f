"""The original's tokenizer flags, the same in every script that reads text:
create_pretraining_data and the fine-tuning scripts. No TensorFlow here."""

from absl import flags

flags.DEFINE_string(
    "vocab_file", None,
    "The vocabulary file that the BERT model was trained on (vocab.txt, or a "
    "Hugging Face tokenizer.json). Default: the model directory's, where "
    "--init_checkpoint names one.")
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
