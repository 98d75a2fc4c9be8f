"""Corpus-scale embedding on Apache Beam against one encode process:
documents (lines) per second of extract_features' Beam pipeline on the
DirectRunner with --num_workers worker processes, and of one process that
runs BertEmbedder.encode over the same files, with the same folder and
texts; the two alternate --rounds times, so drift hits both alike.

    .venv/bin/python benchmarks/beam_embeddings.py [--num_files=4] \\
        [--num_sentences=8000] [--num_workers=2] [--rounds=3]

The corpus: the first --num_sentences sentences of SST-2's train.tsv (in
../shared), cut into --num_files files of one sentence a line. The folder:
random weights in all-MiniLM-L6-v2's shapes (mean pooling, Normalize,
max_seq_length 256), written by bert_tf (benchmarks/embeddings.py's). Both
runs are timed whole, start to finish, as a user runs them: the Beam run
(launched from this process) starts its workers, each imports TensorFlow
and loads the model once, then embeds and writes its files (npz); the
encode run is a fresh process that imports bert_tf, loads the folder and
encodes every file's lines, batch_size 32 for both. The output starts with
the CPU, and the Beam run's npz are checked equal to encode's (1e-5).
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

BENCHMARKS_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(BENCHMARKS_DIR))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# pylint: disable=wrong-import-position,import-outside-toplevel
import machine
from embeddings import SHARED_DIR, sst2_sentences, write_folder


def parse_args():
  parser = argparse.ArgumentParser()
  parser.add_argument("--num_files", type=int, default=4)
  parser.add_argument("--num_sentences", type=int, default=8000)
  parser.add_argument("--num_workers", type=int, default=2)
  parser.add_argument("--rounds", type=int, default=3)
  parser.add_argument("--batch_size", type=int, default=32)
  parser.add_argument("--data_dir", default=os.path.join(
      SHARED_DIR, "data", "glue", "SST-2"))
  parser.add_argument("--vocab_file", default=os.path.join(
      SHARED_DIR, "vocab", "bert-base-uncased-vocab.txt"))
  # The encode run's process: encodes these files with this folder.
  parser.add_argument("--encode_files", help=argparse.SUPPRESS)
  parser.add_argument("--folder", help=argparse.SUPPRESS)
  return parser.parse_args()


def encode_files(args):
  """The encode run: every file's lines, one embedding each, saved beside
  the file (<file>.encoded.npy) for the check."""
  import bert_tf
  model = bert_tf.load_pretrained(args.folder).model
  for path in args.encode_files.split(","):
    with open(path, encoding="utf-8") as reader:
      lines = reader.read().split("\n")[:-1]
    np.save(f"{path}.encoded.npy",
            model.encode(lines, batch_size=args.batch_size))


def write_corpus(args, directory):
  """--num_files files of consecutive SST-2 sentences."""
  sentences = sst2_sentences(args)
  size = -(-len(sentences) // args.num_files)
  files = []
  for index in range(args.num_files):
    path = os.path.join(directory, f"part-{index:03d}.txt")
    with open(path, "w", encoding="utf-8") as writer:
      writer.write("".join(f"{sentence}\n" for sentence in
                           sentences[index * size:(index + 1) * size]))
    files.append(path)
  return files


def beam_run(args, files, output_dir):
  """extract_features' Beam pipeline over the files, from this process."""
  from bert_tf.extraction import beam_pipeline
  from bert_tf.extraction.extraction import ExtractionOptions
  from bert_tf.runs import beam_runs
  beam_pipeline.extract_with_beam(
      ExtractionOptions(input_file=",".join(files), output_file=None,
                        init_checkpoint=args.folder, output_format="npz",
                        batch_size=args.batch_size),
      output_dir, beam_runs.pipeline_options("DirectRunner", [],
                                             args.num_workers))


def encode_run(args, files):
  subprocess.run([sys.executable, __file__, f"--folder={args.folder}",
                  f"--encode_files={','.join(files)}",
                  f"--batch_size={args.batch_size}"], check=True,
                 capture_output=True)


def check_equal(files, output_dir):
  """The Beam run's embeddings are encode's, line for line."""
  for path in files:
    ours = np.load(os.path.join(output_dir, os.path.basename(path)
                                + ".npz"))["embeddings"]
    np.testing.assert_allclose(ours, np.load(f"{path}.encoded.npy"),
                               atol=1e-5)


def timed(run):
  start = time.perf_counter()
  run()
  return time.perf_counter() - start


def main():
  args = parse_args()
  if args.encode_files:
    encode_files(args)
    return
  print(machine.described_in_child(), flush=True)
  with tempfile.TemporaryDirectory(prefix="beam_embeddings_") as work:
    args.folder = os.path.join(work, "folder")
    write_folder(args, args.folder)
    files = write_corpus(args, work)
    output_dir = os.path.join(work, "out")
    print(f"{args.num_sentences} sentences of SST-2's train.tsv in "
          f"{args.num_files} files; folder: random weights in "
          f"all-MiniLM-L6-v2's shapes; load average "
          f"{os.getloadavg()[0]:.2f}", flush=True)
    seconds = {"beam": [], "encode": []}
    for _ in range(args.rounds):
      seconds["beam"].append(timed(lambda: beam_run(args, files,
                                                    output_dir)))
      seconds["encode"].append(timed(lambda: encode_run(args, files)))
    check_equal(files, output_dir)
  for name, label in (("beam", f"Beam DirectRunner, {args.num_workers} "
                       f"workers"), ("encode", "one encode process")):
    median = statistics.median(seconds[name])
    print(f"{label}: {args.num_sentences / median:.1f} lines/s (median "
          f"{median:.1f} s of {', '.join(f'{s:.1f}' for s in seconds[name])})")
  ratios = [encode / beam for beam, encode in zip(seconds["beam"],
                                                   seconds["encode"])]
  print(f"Beam / encode speed, round by round: "
        f"{', '.join(f'{ratio:.2f}x' for ratio in ratios)} (median "
        f"{statistics.median(ratios):.2f}x); load average at the end "
        f"{os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
  main()
