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

Sentence embeddings: --pooling=cls|mean|max|mean_sqrt_len|weightedmean
writes one vector per line instead, the last layer pooled as
sentence-transformers pools (mean_sqrt_len: its mean_sqrt_len_tokens),
L2-normalised with --normalize:
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
A folder's lines are tokenised as its encode tokenises them, by
transformers' rules; a pair line ("a ||| b") is packed as transformers
packs a pair, the prompt before its first text. --export_dir then
exports the embedder: serve_text(text) and serving_default (ids) ->
embedding [batch, dim] (serve_text applies the default prompt and
tokenises as encode; ids are taken as given).
--truncate_dim=k keeps each embedding's first k dimensions (the export's
too), and --precision=int8|uint8|binary|ubinary quantizes the written
embeddings as sentence-transformers' quantize_embeddings (the export
serves float32); int8 and uint8 are calibrated on the whole file's
embeddings. Both refused for the per-token output.

Sparse embeddings: --init_checkpoint naming a sentence-transformers
SparseEncoder folder (SPLADE) writes each line's non-zero weight per
vocabulary token, as bert_tf.load_pretrained(folder).model.encode(lines)
gives them (its default prompt, its max_active_dims; --max_active_dims
overrides it): JSONL lines {"linex_index": n, "embedding": {token:
weight, ...}}, largest weight first, rounded as the original's; or npz of
a CSR matrix [lines, vocab_size], scipy.sparse.csr_matrix((values,
indices, indptr), shape): values float32 [nnz], indices int32 [nnz] (the
token ids, indexes into the folder's vocabulary), indptr int64
[lines + 1], shape int64 [2]; the file's weights are held in memory until
its last line. A Router folder (inference-free SPLADE) embeds the lines
as documents: encode_document, its document route and prompt. --pooling,
--normalize, --truncate_dim and --precision are refused; --layers alone
gives the per-token output. --export_dir exports serve_text(text) and
serving_default (ids) -> token_ids int32 [batch, k] and weights float32
[batch, k], each text's k largest weights, largest first (weights of 0
where it has fewer non-zero ones: drop them); k is --top_k, by default
--max_active_dims, else the folder's, else 128:

    python run_scripts/extract_features.py --input_file=passages.txt \\
      --output_file=passages.npz --output_format=npz \\
      --init_checkpoint=splade-cocondenser-ensembledistil \\
      --export_dir=splade_export --top_k=256

Corpus scale: with --beam_runner and --output_dir instead of
--output_file, an Apache Beam pipeline (pip install -e ".[beam]") writes
<output_dir>/<input file name>.<jsonl or npz> for each file of
--input_file (comma-separated globs), byte for byte what this script
writes for that file alone (int8 and uint8 calibrated on that file), each
worker loading the model once; the outputs of a run appear together, or
none. Flags this script does not define go to Beam (--project, --region,
--temp_location, --flink_master, ...), as create_pretraining_data's:

    python run_scripts/extract_features.py --input_file='corpus/*.txt' \\
      --output_dir=embeddings --init_checkpoint=all-MiniLM-L6-v2 \\
      --output_format=npz --beam_runner=DirectRunner --num_workers=2
"""

from absl import flags, logging

import program  # first: quiets TensorFlow's start-up
import beam_flags
import export_flags
import tokenizer_flags
import model_flags
from bert_tf.extraction.output_files import JSONL, NPZ

# bert_tf.extraction.extraction's DEFAULT_LAYERS and DEFAULT_MAX_SEQ_LENGTH,
# and embeddings.POOLINGS, named here so that the flags parse before
# TensorFlow is imported.
DEFAULT_LAYERS = "-1,-2,-3,-4"
DEFAULT_MAX_SEQ_LENGTH = 128
POOLINGS = ("cls", "mean", "max", "mean_sqrt_len", "weightedmean")
# bert_tf.extraction.quantization.PRECISIONS.
PRECISIONS = ("float32", "int8", "uint8", "binary", "ubinary")

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
flags.DEFINE_integer(
    "truncate_dim", None,
    "Sentence embeddings: write their first this many dimensions "
    "(Matryoshka; after --normalize, not normalised again). A "
    "sentence-transformers folder's own truncate_dim by default.")
flags.DEFINE_enum(
    "precision", "float32", list(PRECISIONS),
    "Sentence embeddings: quantize them as sentence-transformers' "
    "quantize_embeddings (npz of that dtype; binary and ubinary pack 8 "
    "dimensions a byte). int8 and uint8 are calibrated on the whole "
    "file's embeddings (each dimension's min and max).")
flags.DEFINE_integer(
    "max_active_dims", None,
    "A SparseEncoder folder: write each line's this many largest weights "
    "(the folder's max_active_dims by default; without one, all).")
flags.DEFINE_integer(
    "top_k", None,
    "A SparseEncoder folder's --export_dir: serve each text's this many "
    "largest weights and their token ids (by default --max_active_dims, "
    "else the folder's, else 128).")
flags.DEFINE_string(
    "beam_runner", None,
    "Run on Apache Beam with this runner (DirectRunner, DataflowRunner, "
    "FlinkRunner, SparkRunner, ...): each --input_file file gives "
    "<output_dir>/<its name>.<output_format>. Flags not defined here are "
    "Beam's pipeline options.")
flags.DEFINE_string("output_dir", None,
                    "With --beam_runner: where the outputs go.")
flags.DEFINE_integer(
    "num_workers", 0,
    "With --beam_runner: the DirectRunner's worker processes, or Beam's "
    "--num_workers on other runners. 0: the runner's default.")
flags.adopt_module_key_flags(tokenizer_flags)
flags.adopt_module_key_flags(model_flags)
flags.adopt_module_key_flags(export_flags)
FLAGS = flags.FLAGS


def main(argv):
  beam_args = argv[1:]
  beam_flags.check_beam_args(beam_args, FLAGS.beam_runner)
  if FLAGS.num_workers < 0:
    raise ValueError(f"--num_workers={FLAGS.num_workers}: must be 0 or more")
  if FLAGS.beam_runner is None:
    for name in ("output_dir", "num_workers"):
      if FLAGS[name].present:
        raise ValueError(f"--{name} is only for --beam_runner")
  elif FLAGS.output_dir is None:
    raise ValueError("--beam_runner needs --output_dir")
  elif FLAGS["distribution_strategy"].present or model_flags.tpu_address():
    raise ValueError("--distribution_strategy: with --beam_runner each "
                     "worker runs the model on its own GPU, else its CPU")
  beam = beam_flags.beam_pipeline("bert_tf.extraction.beam_pipeline") \
      if FLAGS.beam_runner else None
  from bert_tf.extraction.extraction import ExtractionOptions, extract_features
  options = ExtractionOptions(
      input_file=FLAGS.input_file, output_file=FLAGS.output_file,
      bert_config_file=FLAGS.bert_config_file,
      init_checkpoint=FLAGS.init_checkpoint, vocab_file=FLAGS.vocab_file,
      layers=_given("layers"), max_seq_length=_given("max_seq_length"),
      do_lower_case=tokenizer_flags.do_lower_case(),
      batch_size=FLAGS.batch_size,
      output_format=FLAGS.output_format, use_xla=FLAGS.use_xla,
      dtype=FLAGS.dtype, export_dir=FLAGS.export_dir,
      export_text=FLAGS.export_signatures == "all", pooling=FLAGS.pooling,
      normalize=FLAGS.normalize, truncate_dim=FLAGS.truncate_dim,
      precision=FLAGS.precision, max_active_dims=FLAGS.max_active_dims,
      top_k=FLAGS.top_k)
  if beam:
    _extract_with_beam(beam, options, beam_args)
  else:
    extract_features(options, model_flags.strategy())


def _extract_with_beam(beam, options, beam_args):
  """extract_features on Beam (bert_tf.extraction.beam_pipeline)."""
  beam_runs = beam_flags.beam_runs()
  beam_runs.check_paths_reach_workers(FLAGS.beam_runner, [
      (f"--{name}", FLAGS[name].value) for name in (
          "input_file", "output_dir", "init_checkpoint", "bert_config_file",
          "vocab_file") if FLAGS[name].value is not None])
  pipeline_options = beam_runs.pipeline_options(
      FLAGS.beam_runner, beam_args, FLAGS.num_workers)
  files, lines, seconds = beam.extract_with_beam(options, FLAGS.output_dir,
                                                 pipeline_options)
  if lines is None:  # a runner without counters
    logging.info("Done: %d files in %.1f s", files, seconds)
  else:
    logging.info("Done: %d files, %d lines in %.1f s (%.1f lines/s)", files,
                 lines, seconds, lines / seconds)


def _given(name):
  """The flag's value where given, else None: the run's default, which
  can depend on the model."""
  return FLAGS[name].value if FLAGS[name].present else None


if __name__ == "__main__":
  program.run(main, required_flags=["init_checkpoint"],
              pass_through_unknown=True)
