"""The encoder's contextual embeddings for every line of a text file: the
original google-research/bert extract_features.py, same flags, defaults
and JSONL, on tf.distribute:

    python run_scripts/extract_features.py --input_file=input.txt \\
      --output_file=output.jsonl --vocab_file=$BERT_BASE_DIR/vocab.txt \\
      --bert_config_file=$BERT_BASE_DIR/bert_config.json \\
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt \\
      --layers=-1,-2,-3,-4 --max_seq_length=128 --batch_size=8

Each line is an example ("text_a ||| text_b" for a pair). The JSONL holds,
per line, linex_index and per token (with [CLS] and [SEP]) its layers'
values rounded to 6 decimals, as the original's. --output_format=npz writes
the same layers as float32 arrays instead (see bert_tf.tasks.
feature_extraction). --use_one_hot_embeddings is accepted and changes
nothing: it chose how the original looked up embeddings on TPUs; Keras'
lookup is already efficient there. With --export_dir it also exports the
model for TF Serving (the chosen layers and a sentence vector, from ids or
raw text; alone, without --input_file and --output_file, it exports only).

Sentence embeddings: --pooling=cls|mean|max|mean_sqrt_len writes one vector
per line instead, the last layer pooled as sentence-transformers pools
(mean_sqrt_len: its mean_sqrt_len_tokens), L2-normalised with --normalize:
npz `embeddings` float32 [lines, dim], or JSONL lines {"linex_index": n,
"embedding": [...]} rounded as the original's. --init_checkpoint naming a
sentence-transformers folder alone gives the folder's own pipeline, as
bert_tf.load_pretrained(folder).model.encode(lines) computes it: its
pooling, Dense modules, Normalize, max length (an explicit
--max_seq_length wins) and default prompt, prefixed to each line's text.
--pooling and --normalize replace the folder's pooling and Normalize; its
Dense modules stay (refused where they take several modes concatenated).
--layers alone on such a folder gives the per-token output; with
--pooling or --normalize it is refused, as --pooling on a CrossEncoder.
A pair line ("a ||| b") is packed as for the per-token output, the
prompt before its first text. --export_dir then exports the embedder:
serve_text(text) and serving_default (ids) -> embedding [batch, dim]
(serve_text applies the default prompt; ids are taken as given).
"""

from absl import flags

import program  # first: quiets TensorFlow's start-up
import export_flags
import tokenizer_flags
import model_flags
from bert_tf.extraction.output_files import JSONL, NPZ

# bert_tf.extraction.extraction's DEFAULT_LAYERS and DEFAULT_MAX_SEQ_LENGTH,
# and embeddings.POOLINGS, named here so that the flags parse before
# TensorFlow is imported.
DEFAULT_LAYERS = "-1,-2,-3,-4"
DEFAULT_MAX_SEQ_LENGTH = 128
POOLINGS = ("cls", "mean", "max", "mean_sqrt_len")

flags.DEFINE_string("input_file", None, "")
flags.DEFINE_string("output_file", None, "")
flags.DEFINE_string("layers", DEFAULT_LAYERS,
                    "The per-token output's layers (not with --pooling).")
flags.DEFINE_integer(
    "max_seq_length", DEFAULT_MAX_SEQ_LENGTH,
    "The maximum total input sequence length after WordPiece tokenization. "
    "Sequences longer than this will be truncated, and sequences shorter "
    "than this will be padded. A sentence-transformers folder's own by "
    "default.")
flags.DEFINE_integer("batch_size", 32, "Batch size for predictions.")
flags.DEFINE_bool(
    "use_one_hot_embeddings", False,
    "Accepted for the original's command lines; changes nothing here.")
flags.DEFINE_enum("output_format", JSONL, [JSONL, NPZ],
                  "jsonl: the original's file; npz: float32 arrays.")
flags.DEFINE_enum("pooling", None, list(POOLINGS),
                  "One pooled vector per line (see the module docstring).")
flags.DEFINE_bool("normalize", None,
                  "L2-normalise the pooled vectors (with --pooling, or over "
                  "a sentence-transformers folder's own Normalize).")
flags.adopt_module_key_flags(tokenizer_flags)
flags.adopt_module_key_flags(model_flags)
flags.adopt_module_key_flags(export_flags)
FLAGS = flags.FLAGS


def main(_):
  from bert_tf.extraction.extraction import ExtractionOptions, extract_features
  extract_features(ExtractionOptions(
      input_file=FLAGS.input_file, output_file=FLAGS.output_file,
      bert_config_file=FLAGS.bert_config_file,
      init_checkpoint=FLAGS.init_checkpoint, vocab_file=FLAGS.vocab_file,
      layers=_given("layers"), max_seq_length=_given("max_seq_length"),
      do_lower_case=tokenizer_flags.do_lower_case(),
      batch_size=FLAGS.batch_size,
      output_format=FLAGS.output_format, use_xla=FLAGS.use_xla,
      dtype=FLAGS.dtype, export_dir=FLAGS.export_dir,
      export_text=FLAGS.export_signatures == "all", pooling=FLAGS.pooling,
      normalize=FLAGS.normalize), model_flags.strategy())


def _given(name):
  """The flag's value where given, else None: the run's default, which
  can depend on the model."""
  return FLAGS[name].value if FLAGS[name].present else None


if __name__ == "__main__":
  program.run(main, required_flags=["init_checkpoint"])
