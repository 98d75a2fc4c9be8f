"""Learns a WordPiece vocab.txt, in the release layout, from plain text.

The input is create_pretraining_data's: text files, one sentence per line,
blank lines between documents. Lines are split by the original BasicTokenizer
with --do_lower_case, so the pieces are those FullTokenizer will look up, then
tensorflow-text's learner (bert_vocab_from_dataset) picks them. The same input
and flags always give the same file; it is written only when complete.

    python run_scripts/build_vocab.py --input_file=corpus.txt \
        --output_file=vocab.txt --vocab_size=30522 --do_lower_case=True
"""

import itertools
import time

from absl import flags, logging

import program
from bert_tf.files import input_checks, output_paths
from bert_tf.pretraining import documents
from bert_tf.training import option_checks
from bert_tf.wordpiece import learning, rules

flags.DEFINE_list("input_file", None,
                  "Comma-separated text files or globs, read in sorted order.")
flags.DEFINE_string("output_file", None, "The vocab.txt to write.")
flags.DEFINE_integer("vocab_size", 30522,
                     "Largest vocabulary size, special tokens included.")
flags.DEFINE_bool("do_lower_case", True,
                  "Lower-case and strip accents first, as the model will.")
flags.DEFINE_integer(
    "num_unused", learning.DEFAULT_NUM_UNUSED,
    "[unused*] tokens after [PAD]; the default 99 puts [UNK] [CLS] [SEP] "
    "[MASK] at ids 100-103 as in Google's vocabularies.")
flags.DEFINE_integer(
    "min_count", 10,
    "Fewest occurrences of a learned multi-character piece; on small text "
    "this, not --vocab_size, limits the size.")
flags.DEFINE_float("slack_ratio", 0.05,
                   "Stop within this fraction below --vocab_size.")
flags.DEFINE_integer("num_iterations", 4, "The learner's refinement passes.")
flags.DEFINE_integer(
    "max_unique_chars", 1000,
    "Most single characters kept; words with rarer ones become [UNK].")
flags.DEFINE_integer("max_lines", None,
                     "Read at most this many lines (all when unset).")
FLAGS = flags.FLAGS


def read_lines(files, max_lines):
  """Stripped lines of the files, in order, up to max_lines."""
  return list(itertools.islice(documents.stripped_lines(files), max_lines))


def validate_flags():
  reserved = FLAGS.num_unused + 1 + len(rules.SPECIAL_TOKENS)
  if FLAGS.vocab_size < reserved + 2:
    raise ValueError(f"--vocab_size={FLAGS.vocab_size}: must leave room for "
                     f"characters after the {reserved} special tokens (at "
                     f"least {reserved + 2})")
  option_checks.check_at_least_one(
      FLAGS, ("num_iterations", "max_unique_chars", "min_count"))
  if FLAGS.num_unused < 0:
    raise ValueError(f"--num_unused={FLAGS.num_unused}: must be 0 or more")
  if FLAGS.max_lines is not None:
    option_checks.check_at_least_one(FLAGS, ("max_lines",))
  if not 0 <= FLAGS.slack_ratio < 1:
    raise ValueError(f"--slack_ratio={FLAGS.slack_ratio}: must be in [0, 1)")


def main(_):
  start = time.time()
  validate_flags()
  files = input_checks.input_files(FLAGS.input_file)
  output_paths.check_outputs(
      outputs=[("--output_file", FLAGS.output_file)],
      inputs=[("--input_file", path) for path in files])
  documents.check_text_files(files)
  lines = read_lines(files, FLAGS.max_lines)
  if not any(lines):
    raise ValueError(f"--input_file: no text in {', '.join(files)}")
  logging.info("Learning up to %d tokens from %d lines (%.1f s so far)",
               FLAGS.vocab_size, len(lines), time.time() - start)
  tokens = learning.learn_vocab(
      lines, FLAGS.vocab_size, do_lower_case=FLAGS.do_lower_case,
      num_unused=FLAGS.num_unused, min_count=FLAGS.min_count,
      slack_ratio=FLAGS.slack_ratio, num_iterations=FLAGS.num_iterations,
      max_unique_chars=FLAGS.max_unique_chars)
  learning.write_vocab(tokens, FLAGS.output_file)
  logging.info("Wrote %d tokens to %s in %.1f s", len(tokens),
               FLAGS.output_file, time.time() - start)


if __name__ == "__main__":
  program.run(main, required_flags=["input_file", "output_file"])
