"""Sentence embeddings: BertEmbedder.encode against sentence-transformers'
SentenceTransformer.encode (torch, CPU) on the same folder and sentences,
in the same run, both as whole calls and as whole processes.

    .venv/bin/python benchmarks/embeddings.py \\
        [--peer_python=/path/to/python/with/sentence-transformers] \\
        [--folder=DIR] [--rounds=3] [--process_rounds=3] [--threads=N]

The sentences are the first --num_sentences of SST-2's train.tsv (in
../shared), encoded with batch_size 32. Without --folder the folder is a
random-weight BERT of all-MiniLM-L6-v2's shapes (mean pooling, Normalize,
max_seq_length 256), written by bert_tf's own
save_pretrained(format="sentence-transformers") into a temporary directory.

Each library runs under its own interpreter, in processes of its own:
sentence-transformers under --peer_python (by default this one). Where
that interpreter cannot import it, the benchmark says so and times bert_tf
alone: torch and sentence-transformers are never bert_tf's dependencies.

Whole calls: each library loads the folder once in a long-lived process,
encodes every sentence once as a warm-up (bert_tf traces its shapes then),
then the two encode all of them in turn, --rounds times; the ratio is taken
round by round, so drift hits both alike. Whole processes: a fresh process
that imports the library, loads the folder and encodes every sentence,
start to finish, the two alternating, after one warm-up run each. Both
libraries use every core by default (TensorFlow's and torch's defaults);
--threads=N sets each one's intra- and inter-op threads to N. The output
says what each used, how long tokenising alone takes in each, and how far
their embeddings are apart.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

BENCHMARKS_DIR = os.path.dirname(os.path.abspath(__file__))
PROJECT_DIR = os.path.dirname(BENCHMARKS_DIR)
sys.path.insert(0, PROJECT_DIR)
SHARED_DIR = os.path.join(os.path.dirname(PROJECT_DIR), "shared")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# pylint: disable=wrong-import-position,import-outside-toplevel
from convert_checkpoint import measured_alternately, medians

BERT_TF = "bert_tf"
PEER = "sentence-transformers"
MINILM = {"vocab_size": 30522, "hidden_size": 384, "num_hidden_layers": 6,
          "num_attention_heads": 12, "intermediate_size": 1536,
          "hidden_act": "gelu_exact", "max_position_embeddings": 512,
          "type_vocab_size": 2, "initializer_range": 0.02}


def parse_args(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--folder", help="a sentence-transformers folder "
                      "(default: a random one of all-MiniLM-L6-v2's shapes)")
  parser.add_argument("--peer_python", default=sys.executable,
                      help="an interpreter that imports sentence-transformers")
  parser.add_argument("--data_dir", default=os.path.join(
      SHARED_DIR, "data", "glue", "SST-2"))
  parser.add_argument("--vocab_file", default=os.path.join(
      SHARED_DIR, "vocab", "bert-base-uncased-vocab.txt"))
  parser.add_argument("--num_sentences", type=int, default=10000)
  parser.add_argument("--batch_size", type=int, default=32)
  parser.add_argument("--rounds", type=int, default=3)
  parser.add_argument("--process_rounds", type=int, default=3)
  parser.add_argument("--threads", type=int, default=0,
                      help="intra- and inter-op threads of each (0: theirs)")
  parser.add_argument("--worker", choices=(BERT_TF, PEER),
                      help=argparse.SUPPRESS)
  parser.add_argument("--job", choices=(BERT_TF, PEER),
                      help=argparse.SUPPRESS)
  parser.add_argument("--sentences_file", help=argparse.SUPPRESS)
  parser.add_argument("--write_folder", help=argparse.SUPPRESS)
  return parser.parse_args(argv)


class BertTfSide:
  """bert_tf's BertEmbedder, loaded from the folder."""

  def __init__(self, folder, threads):
    import tensorflow as tf
    import bert_tf
    if threads:
      tf.config.threading.set_intra_op_parallelism_threads(threads)
      tf.config.threading.set_inter_op_parallelism_threads(threads)
    self.tf = tf
    self.model = bert_tf.load_pretrained(folder).model

  def settings(self):
    threading = self.tf.config.threading
    return (f"bert_tf on TensorFlow {self.tf.__version__}: intra-op "
            f"{threading.get_intra_op_parallelism_threads()}, inter-op "
            f"{threading.get_inter_op_parallelism_threads()} threads "
            "(0: all cores)")

  def encode(self, texts, batch_size):
    return self.model.encode(texts, batch_size=batch_size)

  def tokenise(self, texts):
    """Each text's pieces, tokenised and packed as encode does it, and the
    order encode batches them in (by pieces)."""
    features = self.model.preprocessor(self.tf.constant(texts))
    lengths = features["input_mask"].numpy().sum(axis=-1)
    return lengths, np.argsort(lengths, kind="stable")


class PeerSide:
  """sentence-transformers' SentenceTransformer on the CPU."""

  def __init__(self, folder, threads):
    import sentence_transformers
    import torch
    if threads:
      torch.set_num_threads(threads)
      torch.set_num_interop_threads(threads)
    self.torch = torch
    self.version = sentence_transformers.__version__
    self.model = sentence_transformers.SentenceTransformer(folder,
                                                           device="cpu")

  def settings(self):
    return (f"sentence-transformers {self.version} on torch "
            f"{self.torch.__version__}: intra-op "
            f"{self.torch.get_num_threads()}, inter-op "
            f"{self.torch.get_num_interop_threads()} threads")

  def encode(self, texts, batch_size):
    return self.model.encode(texts, batch_size=batch_size,
                             show_progress_bar=False)

  def tokenise(self, texts):
    """Each text's pieces, and the order its encode batches them in (by
    characters, longest first)."""
    features = self.model.preprocess(texts)
    lengths = features["attention_mask"].sum(dim=-1).numpy()
    return lengths, np.argsort([-len(text) for text in texts])


SIDES = {BERT_TF: BertTfSide, PEER: PeerSide}


def read_sentences(path):
  with open(path, encoding="utf-8") as reader:
    return reader.read().split("\n")


def seconds_of(run):
  start = time.perf_counter()
  result = run()
  return time.perf_counter() - start, result


def positions_run(lengths, order, batch_size):
  """The positions the model runs: each batch of the order, padded to its
  longest text."""
  batches = [lengths[order[start:start + batch_size]]
             for start in range(0, len(order), batch_size)]
  return int(sum(len(batch) * batch.max() for batch in batches))


def serve(side, texts, batch_size, commands, replies):
  """A worker's loop: for each command line, one JSON reply line.
  "encode" and "tokenise" time one call on every text; "save PATH" writes
  the last embeddings (.npy)."""
  embeddings = None
  for command in commands:
    name, _, argument = command.strip().partition(" ")
    if name == "encode":
      seconds, embeddings = seconds_of(lambda: side.encode(texts,
                                                           batch_size))
      reply = {"seconds": seconds}
    elif name == "tokenise":
      seconds, (lengths, order) = seconds_of(lambda: side.tokenise(texts))
      reply = {"seconds": seconds, "mean_pieces": float(lengths.mean()),
               "positions": positions_run(lengths, order, batch_size)}
    elif name == "save":
      np.save(argument, np.asarray(embeddings, np.float32))
      reply = {}
    else:
      raise ValueError(f"embeddings worker: unknown command {command!r}")
    replies.write(json.dumps(reply) + "\n")
    replies.flush()


def run_worker(args):
  """Loads the folder, encodes once (the warm-up) and serves commands on
  stdin; replies go to the original stdout, anything printed to stderr."""
  replies = os.fdopen(os.dup(1), "w")
  os.dup2(2, 1)
  texts = read_sentences(args.sentences_file)
  load, side = seconds_of(lambda: SIDES[args.worker](args.folder,
                                                     args.threads))
  first, _ = seconds_of(lambda: side.encode(texts, args.batch_size))
  replies.write(json.dumps({"settings": side.settings(), "load": load,
                            "first_call": first}) + "\n")
  replies.flush()
  serve(side, texts, args.batch_size, sys.stdin, replies)


def run_job(args):
  """A whole process as a user runs one: load the folder, encode."""
  side = SIDES[args.job](args.folder, args.threads)
  side.encode(read_sentences(args.sentences_file), args.batch_size)


def write_folder(args, directory):
  """A random BertEmbedder of all-MiniLM-L6-v2's shapes, saved by bert_tf
  as a sentence-transformers folder."""
  import bert_tf
  bert_tf.BertEmbedder(
      bert_tf.BertConfig.from_dict(MINILM), pooling="mean", normalize=True,
      preprocessor=bert_tf.BertPreprocessor(args.vocab_file, True, 256),
  ).save_pretrained(directory, format="sentence-transformers")


class Worker:
  """A worker process of one side, driven over its stdin and stdout."""

  def __init__(self, python, side, arguments, log_file):
    self.log_file = log_file
    with open(log_file, "w", encoding="utf-8") as log:
      self.process = subprocess.Popen(  # pylint: disable=consider-using-with
          [python, __file__, f"--worker={side}", *arguments],
          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
          text=True)
    self.started = self.reply()

  def ask(self, command):
    self.process.stdin.write(command + "\n")
    self.process.stdin.flush()
    return self.reply()

  def reply(self):
    line = self.process.stdout.readline()
    if not line:
      with open(self.log_file, encoding="utf-8") as log:
        raise RuntimeError(f"embeddings worker failed: {log.read()[-2000:]}")
    return json.loads(line)

  def close(self):
    self.process.stdin.close()
    self.process.wait()


def peer_missing(python):
  """Why `python` cannot run the peer, or None when it can."""
  result = subprocess.run(
      [python, "-c", "import sentence_transformers, torch"],
      capture_output=True, text=True, check=False)
  if result.returncode == 0:
    return None
  lines = result.stderr.strip().splitlines() or ["it failed"]
  return lines[-1]


def print_timings(title, results, count, extra=None):
  """Min, median and sentences/s of each side; bert_tf's speed against
  the peer's round by round (the peer's seconds over bert_tf's)."""
  print(f"\n{title}")
  print(f"  {'':<22} {'min s':>8} {'median s':>9} {'sentences/s':>12}"
        f"{'  ' + extra[0] if extra else ''}")
  for side, values in results.items():
    median = statistics.median(values)
    print(f"  {side:<22} {min(values):>8.2f} {median:>9.2f} "
          f"{count / median:>12.0f}"
          f"{'  ' + extra[1](side) if extra else ''}")
  if len(results) == 2:
    ratios = [peer / ours for ours, peer in zip(*results.values())]
    print(f"  bert_tf's speed / sentence-transformers', round by round: "
          f"median {statistics.median(ratios):.2f}x (min {min(ratios):.2f}x,"
          f" max {max(ratios):.2f}x)")


def time_calls(args, pythons, work, texts_file):
  """Whole calls in long-lived workers; prints their settings, the
  timings, tokenising alone and the embeddings' difference."""
  arguments = [f"--folder={args.folder}", f"--sentences_file={texts_file}",
               f"--batch_size={args.batch_size}", f"--threads={args.threads}"]
  workers = {}
  try:
    for side, python in pythons.items():
      workers[side] = Worker(python, side, arguments,
                             os.path.join(work, f"{side}.log"))
    for side, worker in workers.items():
      started = worker.started
      print(f"{started['settings']}; importing it and loading the folder "
            f"{started['load']:.2f} s, first call {started['first_call']:.2f}"
            " s")
    results = {side: [] for side in workers}
    for _ in range(args.rounds):  # the sides taking turns
      for side, worker in workers.items():
        results[side].append(worker.ask("encode")["seconds"])
    print_timings(f"Whole calls, encode(sentences, batch_size="
                  f"{args.batch_size}): {args.rounds} rounds after a warm-up",
                  results, args.num_sentences)
    print("\nTokenising alone (all sentences at once, as each library's "
          "encode tokenises and orders them):")
    for side, worker in workers.items():
      reply = worker.ask("tokenise")
      print(f"  {side:<22} {reply['seconds']:8.2f} s, mean "
            f"{reply['mean_pieces']:.1f} pieces; the model runs "
            f"{reply['positions']:,} positions (each batch padded to its "
            f"longest text)")
    if len(workers) == 2:
      saved = {side: os.path.join(work, f"{side}.npy") for side in workers}
      for side, worker in workers.items():
        worker.ask(f"save {saved[side]}")
      ours, peer = (np.load(path) for path in saved.values())
      print(f"\nEmbeddings, bert_tf against sentence-transformers: max abs "
            f"difference {np.abs(ours - peer).max():.2e}")
  finally:
    for worker in workers.values():
      worker.close()


def time_processes(args, pythons, texts_file):
  """Whole processes, alternating, after one warm-up run of each."""
  runs = {side: lambda _, side=side, python=python: [
      python, __file__, f"--job={side}", f"--folder={args.folder}",
      f"--sentences_file={texts_file}", f"--batch_size={args.batch_size}",
      f"--threads={args.threads}"] for side, python in pythons.items()}
  measured_alternately(runs, 1)
  results = measured_alternately(runs, args.process_rounds)
  seconds = {side: [run[0] for run in values]
             for side, values in results.items()}
  peaks = {side: peak for side, (_, peak) in medians(results).items()}
  print_timings(
      f"Whole processes (import, load the folder, encode, exit): "
      f"{args.process_rounds} rounds after a warm-up", seconds,
      args.num_sentences,
      ("peak memory", lambda side: f"{peaks[side] / 1e9:.2f} GB"))


def main():
  args = parse_args()
  if args.write_folder:
    write_folder(args, args.write_folder)
    return
  if args.worker or args.job:
    # Else benchmarks/tokenizers.py hides the package sentence-transformers
    # imports.
    sys.path[:] = [path for path in sys.path
                   if os.path.abspath(path or ".") != BENCHMARKS_DIR]
    (run_worker if args.worker else run_job)(args)
    return
  pythons = {BERT_TF: sys.executable, PEER: args.peer_python}
  missing = peer_missing(args.peer_python)
  if missing:
    print(f"sentence-transformers: {args.peer_python} cannot import it "
          f"({missing}); timing bert_tf alone (--peer_python names an "
          "interpreter that can)")
    del pythons[PEER]
  with tempfile.TemporaryDirectory(prefix="embeddings_benchmark_") as work:
    texts_file = os.path.join(work, "sentences.txt")
    with open(texts_file, "w", encoding="utf-8") as writer:
      writer.write("\n".join(sst2_sentences(args)))
    if args.folder:
      print(f"Folder: {args.folder}")
    else:
      args.folder = os.path.join(work, "folder")
      subprocess.run([sys.executable, __file__,
                      f"--write_folder={args.folder}",
                      f"--vocab_file={args.vocab_file}"],
                     check=True, capture_output=True)
      print("Folder: random weights in all-MiniLM-L6-v2's shapes (mean "
            "pooling, Normalize, max_seq_length 256), written by bert_tf")
    print(f"{args.num_sentences} sentences of SST-2's train.tsv; "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    time_calls(args, pythons, work, texts_file)
    if args.process_rounds:
      time_processes(args, pythons, texts_file)
    print(f"\nLoad average at the end: {os.getloadavg()[0]:.2f} (other "
          "processes share these cores where it is over what ran here)")


def sst2_sentences(args):
  """The first --num_sentences sentences of SST-2's train.tsv."""
  from bert_tf.tasks.glue import examples as glue
  examples = glue.read_examples(glue.get_task("SST-2"), args.data_dir,
                                "train")
  if len(examples) < args.num_sentences:
    raise ValueError(f"{args.data_dir}/train.tsv: {len(examples)} sentences,"
                     f" fewer than --num_sentences={args.num_sentences}")
  return [example.text_a for example in examples[:args.num_sentences]]


if __name__ == "__main__":
  main()
