"""Splits a large text corpus into shards at document boundaries.

create_pretraining_data needs memory in proportion to its largest input
file (the original's algorithm holds a file's documents and instances), on
every --num_workers process and Beam worker. Split a big file first; each
shard then becomes one job and one output file:

    python run_scripts/split_corpus.py --input_file=wiki.txt \\
        --output_dir=wiki_shards --shard_mb=100

writes wiki_shards/wiki-00000-of-00213.txt, ... Shards end only after a
blank line, so no document is cut in two. They appear together when all
are written; shards of an earlier split with another count are refused.
"""

from absl import flags, logging

import program
from bert_tf.files import input_checks, output_paths
from bert_tf.pretraining import corpus_shards

flags.DEFINE_string("input_file", None, "The text file to split (one "
                    "sentence per line, blank lines between documents).")
flags.DEFINE_string("output_dir", None, "Where the shards go.")
flags.DEFINE_float("shard_mb", 100.0,
                   "Each shard holds at least this many MB (1e6 bytes), up "
                   "to its next document boundary; the last holds the rest.")
FLAGS = flags.FLAGS


def main(_):
  if FLAGS.shard_mb <= 0:
    raise ValueError(f"--shard_mb={FLAGS.shard_mb}: must be positive")
  input_checks.check_input_file("--input_file", FLAGS.input_file)
  output_paths.check_outputs(output_dirs=[("--output_dir", FLAGS.output_dir)])
  logging.info("Finding document boundaries in %s", FLAGS.input_file)
  ranges = corpus_shards.document_aligned_ranges(
      FLAGS.input_file, int(FLAGS.shard_mb * 1e6))
  if not ranges:
    raise ValueError(f"--input_file={FLAGS.input_file} is empty")
  paths = corpus_shards.shard_paths(FLAGS.input_file, FLAGS.output_dir,
                                    len(ranges))
  output_paths.check_outputs(
      outputs=[("--output_dir", path) for path in paths],
      inputs=[("--input_file", FLAGS.input_file)])
  others = corpus_shards.other_splits(FLAGS.input_file, FLAGS.output_dir,
                                      paths)
  if others:
    raise ValueError(f"--output_dir={FLAGS.output_dir} holds {others[0]} "
                     f"from another split of this file ({len(others)} such "
                     f"shards); a glob would mix the two: remove them or "
                     f"choose another --output_dir")
  corpus_shards.write_shards(FLAGS.input_file, ranges, paths)
  sizes = [end - start for start, end in ranges]
  logging.info("Wrote %d shards to %s: %.1f to %.1f MB", len(paths),
               FLAGS.output_dir, min(sizes) / 1e6, max(sizes) / 1e6)


if __name__ == "__main__":
  program.run(main, required_flags=["input_file", "output_dir"])
