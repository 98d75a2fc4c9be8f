"""The original's tokenizer flags, the same in every script that reads text:
create_pretraining_data and the fine-tuning scripts. No TensorFlow here."""

from absl import flags

flags.DEFINE_string("vocab_file", None,
                    "The vocabulary file that the BERT model was trained on.")
flags.DEFINE_bool(
    "do_lower_case", True,
    "Whether to lower case the input text. Should be True for uncased "
    "models and False for cased models.")
