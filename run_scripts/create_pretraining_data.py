"""Creates masked-LM / next-sentence TFRecords from raw text.

The original google-research/bert create_pretraining_data.py, same flags and
defaults, same records for the same seed:

    python run_scripts/create_pretraining_data.py \\
      --input_file=corpus.txt --output_file=out.tfrecord \\
      --vocab_file=vocab.txt --do_lower_case=True --max_seq_length=128 \\
      --max_predictions_per_seq=20 --masked_lm_prob=0.15 --random_seed=12345 \\
      --dupe_factor=5

With --num_workers=N and --output_dir instead of --output_file, every input
file is processed on its own, in N processes, exactly as the original run
on that file alone, and written to <output_dir>/<file name>.tfrecord.

With --beam_runner and --output_dir, the same shards are written by an
Apache Beam pipeline (pip install -e ".[beam]"), locally or on a cluster;
flags this script does not define go to Beam (--project, --region,
--temp_location, --flink_master, ...):

    python run_scripts/create_pretraining_data.py \\
      --input_file='corpus/*.txt' --output_dir=records \\
      --vocab_file=vocab.txt --beam_runner=DirectRunner --num_workers=2
"""

from absl import flags, logging

import program
import beam_flags
import tokenizer_flags
from bert_tf import tokenization
from bert_tf.files import input_checks, output_paths
from bert_tf.pretraining import documents, pipeline as pretraining_data
from bert_tf.pretraining.instances import InstanceOptions
from bert_tf.training import option_checks
from bert_tf.wordpiece.rules import (MASK_TOKEN, REQUIRED_TOKENS,
                                        check_special_tokens)

flags.DEFINE_string("input_file", None,
                    "Input raw text file (or comma-separated list of files).")
flags.DEFINE_string(
    "output_file", None,
    "Output TF example file (or comma-separated list of files).")
flags.DEFINE_bool(
    "do_whole_word_mask", False,
    "Whether to use whole word masking rather than per-WordPiece masking.")
flags.DEFINE_integer("max_seq_length", 128, "Maximum sequence length.")
flags.DEFINE_integer("max_predictions_per_seq", 20,
                     "Maximum number of masked LM predictions per sequence.")
flags.DEFINE_integer("random_seed", 12345, "Random seed for data generation.")
flags.DEFINE_integer(
    "dupe_factor", 10,
    "Number of times to duplicate the input data (with different masks).")
flags.DEFINE_float("masked_lm_prob", 0.15, "Masked LM probability.")
flags.DEFINE_float(
    "short_seq_prob", 0.1,
    "Probability of creating sequences which are shorter than the "
    "maximum length.")
flags.DEFINE_integer(
    "num_workers", 0,
    "With --output_dir: process each input file on its own, in this many "
    "processes. 0: all input files are one corpus, as the original.")
flags.DEFINE_string(
    "output_dir", None,
    "With --num_workers or --beam_runner: where <input file name>.tfrecord "
    "files go.")
flags.DEFINE_string(
    "beam_runner", None,
    "With --output_dir: run on Apache Beam with this runner (DirectRunner, "
    "DataflowRunner, FlinkRunner, SparkRunner, ...), one output file per "
    "input file as --num_workers. Flags not defined here are Beam's "
    "pipeline options. --num_workers: the DirectRunner's worker processes, "
    "or Beam's --num_workers on other runners.")
# --help lists --vocab_file and --do_lower_case with this script's flags.
flags.adopt_module_key_flags(tokenizer_flags)
FLAGS = flags.FLAGS


def one_shard_per_input():
  return FLAGS.num_workers > 0 or FLAGS.beam_runner is not None


def validate_flags(beam_args):
  beam_flags.check_beam_args(beam_args, FLAGS.beam_runner)
  if FLAGS.num_workers < 0:
    raise ValueError(f"--num_workers={FLAGS.num_workers}: must be 0 or more")
  if one_shard_per_input():
    if FLAGS.output_dir is None or FLAGS.output_file is not None:
      flag = "--beam_runner" if FLAGS.beam_runner else "--num_workers"
      raise ValueError(f"{flag} needs --output_dir instead of --output_file")
  elif FLAGS.output_file is None:
    raise ValueError("--output_file is required (or --num_workers or "
                     "--beam_runner with --output_dir)")
  elif FLAGS.output_dir is not None:
    raise ValueError("--output_dir is only for --num_workers or "
                     "--beam_runner; --output_file names every output here")
  if FLAGS.max_seq_length < 5:
    raise ValueError(f"--max_seq_length={FLAGS.max_seq_length}: must be at "
                     f"least 5 ([CLS] a [SEP] b [SEP])")
  if not 0 < FLAGS.max_predictions_per_seq <= FLAGS.max_seq_length:
    raise ValueError(
        f"--max_predictions_per_seq={FLAGS.max_predictions_per_seq}: must be "
        f"in [1, --max_seq_length={FLAGS.max_seq_length}]")
  if not 0 < FLAGS.masked_lm_prob <= 1:
    raise ValueError(f"--masked_lm_prob={FLAGS.masked_lm_prob}: must be in "
                     f"(0, 1]")
  if not 0 <= FLAGS.short_seq_prob <= 1:
    raise ValueError(f"--short_seq_prob={FLAGS.short_seq_prob}: must be in "
                     f"[0, 1]")
  option_checks.check_at_least_one(FLAGS, ("dupe_factor",))


def load_tokenizer(vocab_file, do_lower_case):
  input_checks.check_input_file("--vocab_file", vocab_file)
  tokenizer = tokenization.FullTokenizer(vocab_file, do_lower_case)
  check_special_tokens(tokenizer.vocab, vocab_file,
                       (*REQUIRED_TOKENS, MASK_TOKEN))
  return tokenizer


def output_files(input_files):
  """The files this run writes: --output_file's, or one per input file in
  --output_dir."""
  if one_shard_per_input():
    return list(pretraining_data.output_files_for(input_files,
                                                  FLAGS.output_dir).values())
  return FLAGS.output_file.split(",")


def main(argv):
  beam_args = argv[1:]
  validate_flags(beam_args)
  beam = beam_flags.beam_pipeline("bert_tf.pretraining.beam_pipeline") \
      if FLAGS.beam_runner else None
  vocab_file, do_lower_case = tokenizer_flags.vocabulary_and_casing()
  if beam:
    beam_flags.beam_runs().check_paths_reach_workers(FLAGS.beam_runner, [
        ("--input_file", FLAGS.input_file),
        ("--output_dir", FLAGS.output_dir),
        ("--vocab_file", vocab_file)])
  input_files = input_checks.input_files(FLAGS.input_file)
  outputs = output_files(input_files)
  output_paths.check_outputs(
      outputs=[("--output_dir" if one_shard_per_input() else "--output_file",
                path) for path in outputs],
      inputs=[("--input_file", path) for path in input_files]
      + [("--vocab_file", vocab_file)],
      output_dirs=[("--output_dir", FLAGS.output_dir)]
      if one_shard_per_input() else [])
  pipeline_options = beam_flags.beam_runs().pipeline_options(
      FLAGS.beam_runner, beam_args, FLAGS.num_workers) if beam else None
  tokenizer = load_tokenizer(vocab_file, do_lower_case)
  if not beam:  # Beam's workers check their own files
    documents.check_text_files(input_files)
  logging.info("*** Reading from input files ***")
  for input_file in input_files:
    logging.info("  %s", input_file)
  options = InstanceOptions(
      max_seq_length=FLAGS.max_seq_length,
      max_predictions_per_seq=FLAGS.max_predictions_per_seq,
      masked_lm_prob=FLAGS.masked_lm_prob,
      short_seq_prob=FLAGS.short_seq_prob,
      dupe_factor=FLAGS.dupe_factor,
      do_whole_word_mask=FLAGS.do_whole_word_mask)
  tokenizer_options = pretraining_data.TokenizerOptions(vocab_file,
                                                       do_lower_case)
  summary = None
  if beam:
    summary = beam.create_with_beam(
        input_files, FLAGS.output_dir, tokenizer_options, options,
        FLAGS.random_seed, pipeline_options)
  elif FLAGS.num_workers > 0:
    summary = pretraining_data.create_in_parallel(
        input_files, FLAGS.output_dir, tokenizer_options, options,
        FLAGS.random_seed, FLAGS.num_workers)
  else:
    logging.info("*** Writing to output files ***")
    for output_file in outputs:
      logging.info("  %s", output_file)
    pretraining_data.create_pretraining_data(
        input_files, outputs, tokenizer, options, FLAGS.random_seed)
  if summary:
    summary.log()


if __name__ == "__main__":
  program.run(main, required_flags=["input_file", "vocab_file"],
              pass_through_unknown=True)
