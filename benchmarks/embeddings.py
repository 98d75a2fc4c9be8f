"""Sentence embeddings, side by side in one run: bert_tf's
BertEmbedder.encode in each dtype of --bert_tf_dtypes against
sentence-transformers' SentenceTransformer.encode on the CPU with each
backend of --peer_backends, on the same folder and sentences, as whole
calls and as whole processes.

    .venv/bin/python benchmarks/embeddings.py \\
        [--peer_python=/path/to/python/with/sentence-transformers] \\
        [--bert_tf_dtypes=float32,bfloat16] \\
        [--peer_backends=torch,onnx,onnx-int8,openvino] \\
        [--folder=DIR] [--num_sentences=2000] [--rounds=3] \\
        [--process_rounds=3] [--threads=N]

A route is one way to encode: a library in its interpreter with one
option. bert_tf's options are its dtypes (load_pretrained(folder,
dtype=...)). sentence-transformers' are its backends: torch (float32),
onnx, onnx-int8 (the ONNX export quantized by
export_dynamic_quantized_onnx_model(model, "avx512_vnni", ...)) and
openvino; each backend but torch exports the model from the folder's
weights into a temporary copy of the folder, never into the folder.

The sentences are the first --num_sentences of SST-2's train.tsv (in
../shared), encoded with batch_size 32. Without --folder the folder is a
random-weight BERT of all-MiniLM-L6-v2's shapes (mean pooling, Normalize,
max_seq_length 256), written by bert_tf's own
save_pretrained(format="sentence-transformers") into a temporary directory.

Each library runs under its own interpreter, in processes of its own:
sentence-transformers under --peer_python (by default this one). Where
that interpreter cannot import it or a backend's modules, the benchmark
says why and leaves those routes out: torch, onnxruntime and OpenVINO are
never bert_tf's dependencies.

Whole calls: each route loads the folder once in a long-lived process
(exporting it where its backend does), encodes every sentence once as a
warm-up (bert_tf traces its shapes then), then the routes encode all of
them in turn, --rounds times; each route's speed against
sentence-transformers' openvino and against bert_tf's float32 is taken
round by round, so drift hits them alike. Each route's embeddings are
compared with sentence-transformers' torch ones (bert_tf float32's where
the peer does not run): the lowest cosine of a sentence's two, and the
largest absolute difference. Whole processes: a fresh process that
imports the library, loads the folder and encodes every sentence, start
to finish, the routes alternating, after one warm-up run each; for
bert_tf's routes and the peer's torch (the others would time their
export, which a user makes once). Each library uses every core by
default; --threads=N sets TensorFlow's and torch's intra- and inter-op
threads to N (onnxruntime and OpenVINO keep their own). The output starts
with the CPU and its bfloat16 and int8 units, and says what each route
used and how long tokenising alone takes in each library.
"""

import argparse
import importlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import typing

import numpy as np

BENCHMARKS_DIR = os.path.dirname(os.path.abspath(__file__))
PROJECT_DIR = os.path.dirname(BENCHMARKS_DIR)
sys.path.insert(0, PROJECT_DIR)
SHARED_DIR = os.path.join(os.path.dirname(PROJECT_DIR), "shared")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# The folder is local: no route needs the Hugging Face Hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

# pylint: disable=wrong-import-position,import-outside-toplevel
import machine
from convert_checkpoint import measured_alternately, medians

BERT_TF = "bert_tf"
PEER = "sentence-transformers"
BERT_TF_DTYPES = ("float32", "bfloat16", "mixed_bfloat16")
# Each sentence-transformers backend: the modules it imports beside
# sentence_transformers, the first one running the model.
PEER_BACKENDS = {"torch": ("torch",),
                 "onnx": ("onnxruntime", "optimum.onnxruntime"),
                 "onnx-int8": ("onnxruntime", "optimum.onnxruntime"),
                 "openvino": ("openvino", "optimum.intel.openvino")}
INT8_FILE = "onnx/model_qint8_avx512_vnni.onnx"
# The routes each route's speed is measured against, and those its
# embeddings are compared with (the first of these that runs).
SPEED_REFERENCES = (f"{PEER} openvino", f"{BERT_TF} float32")
EMBEDDING_REFERENCES = (f"{PEER} torch", f"{BERT_TF} float32")
MINILM = {"vocab_size": 30522, "hidden_size": 384, "num_hidden_layers": 6,
          "num_attention_heads": 12, "intermediate_size": 1536,
          "hidden_act": "gelu_exact", "max_position_embeddings": 512,
          "type_vocab_size": 2, "initializer_range": 0.02}


def names_of(choices):
  """An argparse type: comma-separated names out of `choices`, each once."""
  def parse(text):
    names = list(dict.fromkeys(name for name in text.split(",") if name))
    unknown = [name for name in names if name not in choices]
    if unknown:
      raise argparse.ArgumentTypeError(
          f"{', '.join(unknown)}: expected names out of {', '.join(choices)}")
    return names
  return parse


def parse_args(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--folder", help="a sentence-transformers folder "
                      "(default: a random one of all-MiniLM-L6-v2's shapes)")
  parser.add_argument("--peer_python", default=sys.executable,
                      help="an interpreter that imports sentence-transformers")
  parser.add_argument("--bert_tf_dtypes", type=names_of(BERT_TF_DTYPES),
                      default=["float32", "bfloat16"],
                      help="bert_tf's routes: comma-separated, out of "
                      f"{', '.join(BERT_TF_DTYPES)}")
  parser.add_argument("--peer_backends", type=names_of(PEER_BACKENDS),
                      default=list(PEER_BACKENDS),
                      help="sentence-transformers' routes: comma-separated, "
                      f"out of {', '.join(PEER_BACKENDS)}")
  parser.add_argument("--data_dir", default=os.path.join(
      SHARED_DIR, "data", "glue", "SST-2"))
  parser.add_argument("--vocab_file", default=os.path.join(
      SHARED_DIR, "vocab", "bert-base-uncased-vocab.txt"))
  parser.add_argument("--num_sentences", type=int, default=2000)
  parser.add_argument("--batch_size", type=int, default=32)
  parser.add_argument("--rounds", type=int, default=3)
  parser.add_argument("--process_rounds", type=int, default=3)
  parser.add_argument("--threads", type=int, default=0,
                      help="intra- and inter-op threads of TensorFlow and "
                      "torch (0: theirs)")
  parser.add_argument("--worker", choices=(BERT_TF, PEER),
                      help=argparse.SUPPRESS)
  parser.add_argument("--job", choices=(BERT_TF, PEER),
                      help=argparse.SUPPRESS)
  parser.add_argument("--option", help=argparse.SUPPRESS)
  parser.add_argument("--sentences_file", help=argparse.SUPPRESS)
  parser.add_argument("--write_folder", help=argparse.SUPPRESS)
  return parser.parse_args(argv)


class Route(typing.NamedTuple):
  """One way to encode: a library's side (SIDES) under an interpreter,
  with its option (bert_tf's dtype, sentence-transformers' backend)."""
  python: str
  side: str
  option: str

  @property
  def name(self):
    return f"{self.side} {self.option}"

  def command(self, mode, args, texts_file):
    """The command line of its long-lived worker (mode "worker") or of
    its whole process (mode "job")."""
    return [self.python, __file__, f"--{mode}={self.side}",
            f"--option={self.option}", f"--folder={args.folder}",
            f"--sentences_file={texts_file}",
            f"--batch_size={args.batch_size}", f"--threads={args.threads}"]


class BertTfSide:
  """bert_tf's BertEmbedder, loaded from the folder in `dtype`."""

  def __init__(self, folder, dtype, threads):
    import tensorflow as tf
    import bert_tf
    if threads:
      tf.config.threading.set_intra_op_parallelism_threads(threads)
      tf.config.threading.set_inter_op_parallelism_threads(threads)
    self.tf = tf
    self.dtype = dtype
    self.model = bert_tf.load_pretrained(folder, dtype=dtype).model

  def settings(self):
    threading = self.tf.config.threading
    return (f"bert_tf in {self.dtype} on TensorFlow {self.tf.__version__}: "
            f"intra-op {threading.get_intra_op_parallelism_threads()}, "
            f"inter-op {threading.get_inter_op_parallelism_threads()} "
            "threads (0: all cores)")

  def encode(self, texts, batch_size):
    return self.model.encode(texts, batch_size=batch_size)

  def tokenise(self, texts):
    """Each text's pieces, tokenised and packed as encode does it, and the
    order encode batches them in (by pieces)."""
    features = self.model.preprocessor(self.tf.constant(texts))
    lengths = features["input_mask"].numpy().sum(axis=-1)
    return lengths, np.argsort(lengths, kind="stable")


class PeerSide:
  """sentence-transformers' SentenceTransformer on the CPU with `backend`
  (PEER_BACKENDS). A backend but torch reads a temporary copy of the
  folder, less any export in it: it exports the folder's weights, and
  writes what it exports there."""

  def __init__(self, folder, backend, threads):
    import sentence_transformers
    import torch
    if threads:
      torch.set_num_threads(threads)
      torch.set_num_interop_threads(threads)
    self.torch = torch
    self.backend = backend
    self.runtime = importlib.import_module(PEER_BACKENDS[backend][0])
    self.version = sentence_transformers.__version__
    if backend != "torch":
      self.copy = tempfile.TemporaryDirectory(prefix="embeddings_peer_")
      folder = shutil.copytree(folder, os.path.join(self.copy.name, "folder"),
                               ignore=shutil.ignore_patterns("onnx",
                                                             "openvino"))
    self.model = peer_model(folder, backend)

  def settings(self):
    threads = (f"intra-op {self.torch.get_num_threads()}, inter-op "
               f"{self.torch.get_num_interop_threads()} threads"
               if self.backend == "torch" else "its own threads")
    return (f"sentence-transformers {self.version}, backend {self.backend} "
            f"on {self.runtime.__name__} {self.runtime.__version__}: "
            f"{threads}")

  def encode(self, texts, batch_size):
    return self.model.encode(texts, batch_size=batch_size,
                             show_progress_bar=False)

  def tokenise(self, texts):
    """Each text's pieces, and the order its encode batches them in (by
    characters, longest first)."""
    features = self.model.preprocess(texts)
    lengths = features["attention_mask"].sum(dim=-1).numpy()
    return lengths, np.argsort([-len(text) for text in texts])


def peer_model(folder, backend):
  """SentenceTransformer of `folder` on the CPU with `backend`; onnx-int8
  first writes its quantized export into `folder`."""
  from sentence_transformers import SentenceTransformer
  if backend != "onnx-int8":
    return SentenceTransformer(folder, device="cpu", backend=backend)
  from sentence_transformers import export_dynamic_quantized_onnx_model
  export_dynamic_quantized_onnx_model(peer_model(folder, "onnx"),
                                      "avx512_vnni", folder)
  return SentenceTransformer(folder, device="cpu", backend="onnx",
                             model_kwargs={"file_name": INT8_FILE})


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
  load, side = seconds_of(lambda: SIDES[args.worker](
      args.folder, args.option, args.threads))
  first, _ = seconds_of(lambda: side.encode(texts, args.batch_size))
  replies.write(json.dumps({"settings": side.settings(), "load": load,
                            "first_call": first}) + "\n")
  replies.flush()
  serve(side, texts, args.batch_size, sys.stdin, replies)


def run_job(args):
  """A whole process as a user runs one: load the folder, encode."""
  side = SIDES[args.job](args.folder, args.option, args.threads)
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
  """A route's worker process, driven over its stdin and stdout."""

  def __init__(self, command, log_file):
    self.log_file = log_file
    with open(log_file, "w", encoding="utf-8") as log:
      self.process = subprocess.Popen(  # pylint: disable=consider-using-with
          command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
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


def peer_missing(python, backend):
  """Why `python` cannot run sentence-transformers with `backend`, or None
  when it can."""
  modules = ", ".join(("sentence_transformers", *PEER_BACKENDS[backend]))
  result = subprocess.run([python, "-c", f"import {modules}"],
                          capture_output=True, text=True, check=False)
  if result.returncode == 0:
    return None
  lines = result.stderr.strip().splitlines() or ["it failed"]
  return lines[-1]


def chosen_routes(args):
  """The routes of --bert_tf_dtypes and --peer_backends, less those whose
  modules --peer_python cannot import (it says why)."""
  routes = [Route(sys.executable, BERT_TF, dtype)
            for dtype in args.bert_tf_dtypes]
  for backend in args.peer_backends:
    missing = peer_missing(args.peer_python, backend)
    if missing:
      print(f"{PEER} {backend}: {args.peer_python} cannot import its "
            f"modules ({missing}); left out (--peer_python names an "
            "interpreter that can)")
    else:
      routes.append(Route(args.peer_python, PEER, backend))
  return routes


def file_name(route, extension):
  return f"{route.side}-{route.option}{extension}"


def ratios_text(references, seconds):
  """The median, lowest and highest of a route's speed against a
  reference's, round by round (its seconds over the route's)."""
  ratios = [theirs / ours for theirs, ours in zip(references, seconds)]
  return (f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-"
          f"{max(ratios):.2f})")


def speed_columns(seconds, count):
  """Columns of the routes' median seconds and sentences/s (best and
  median), and of their speed against each of SPEED_REFERENCES that ran."""
  columns = [
      ("median s", lambda route: f"{statistics.median(seconds[route]):.2f}"),
      ("sentences/s best", lambda route: f"{count / min(seconds[route]):.0f}"),
      ("median", lambda route:
       f"{count / statistics.median(seconds[route]):.0f}")]
  names = {route.name: route for route in seconds}
  for reference in (names[name] for name in SPEED_REFERENCES
                    if name in names):
    columns.append((f"vs {reference.name}", lambda route, reference=(
        reference): ratios_text(seconds[reference], seconds[route])))
  return columns


def print_table(title, routes, columns):
  """A row a route, a column a (header, text of a route) pair."""
  rows = [["route", *(header for header, _ in columns)]]
  rows += [[route.name, *(text(route) for _, text in columns)]
           for route in routes]
  widths = [max(len(row[index]) for row in rows)
            for index in range(len(rows[0]))]
  print(f"\n{title}")
  for row in rows:
    print("  " + "  ".join([row[0].ljust(widths[0])] + [
        cell.rjust(width) for cell, width in zip(row[1:], widths[1:])]))


def compared(embeddings, reference):
  """(The lowest cosine of an embedding to its reference, the largest
  absolute difference.)"""
  embeddings, reference = (np.asarray(values, np.float64)
                           for values in (embeddings, reference))
  cosines = (embeddings * reference).sum(axis=-1) / (
      np.linalg.norm(embeddings, axis=-1) * np.linalg.norm(reference,
                                                           axis=-1))
  return float(cosines.min()), float(np.abs(embeddings - reference).max())


def embedding_columns(workers, work):
  """Columns of each route's embeddings compared with those of the first
  of EMBEDDING_REFERENCES that ran (none where none ran), and its name."""
  names = {route.name: route for route in workers}
  reference = next((names[name] for name in EMBEDDING_REFERENCES
                    if name in names), None)
  if reference is None:
    return [], None
  embeddings = {}
  for route, worker in workers.items():
    path = os.path.join(work, file_name(route, ".npy"))
    worker.ask(f"save {path}")
    embeddings[route] = np.load(path)
  agreement = {route: compared(values, embeddings[reference])
               for route, values in embeddings.items()}
  return [("lowest cosine", lambda route: f"{agreement[route][0]:.6f}"),
          ("max abs diff", lambda route: f"{agreement[route][1]:.1e}")
          ], reference


def print_tokenising(workers):
  """Tokenising alone, in the first route of each library."""
  print("\nTokenising alone (all sentences at once, as each library's "
        "encode tokenises and orders them):")
  firsts = {}
  for route, worker in workers.items():
    firsts.setdefault(route.side, worker)
  for side, worker in firsts.items():
    reply = worker.ask("tokenise")
    print(f"  {side:<22} {reply['seconds']:8.2f} s, mean "
          f"{reply['mean_pieces']:.1f} pieces; the model runs "
          f"{reply['positions']:,} positions (each batch padded to its "
          f"longest text)")


def time_calls(args, routes, work, texts_file):
  """Whole calls in long-lived workers; prints their settings, the
  timings, the embeddings' agreement and tokenising alone."""
  workers = {}
  try:
    for route in routes:
      workers[route] = worker = Worker(
          route.command("worker", args, texts_file),
          os.path.join(work, file_name(route, ".log")))
      print(f"{route.name}: {worker.started['settings']}; importing it and "
            f"loading the folder {worker.started['load']:.2f} s, first call"
            f" {worker.started['first_call']:.2f} s")
    seconds = {route: [] for route in workers}
    for _ in range(args.rounds):  # the routes taking turns
      for route, worker in workers.items():
        seconds[route].append(worker.ask("encode")["seconds"])
    agreement, reference = embedding_columns(workers, work)
    print_table(
        f"Whole calls, encode(sentences, batch_size={args.batch_size}): "
        f"{args.rounds} rounds after a warm-up; speed against a route's, "
        "round by round: median (lowest-highest)" + (
            f"; embeddings against {reference.name}'s" if reference else ""),
        workers, speed_columns(seconds, args.num_sentences) + agreement)
    print_tokenising(workers)
  finally:
    for worker in workers.values():
      worker.close()


def time_processes(args, routes, texts_file):
  """Whole processes of bert_tf's routes and the peer's torch route,
  alternating, after one warm-up run of each."""
  runs = {route: lambda _, route=route: route.command("job", args,
                                                      texts_file)
          for route in routes if route.side == BERT_TF
          or route.option == "torch"}
  if not runs:
    return
  measured_alternately(runs, 1)
  results = measured_alternately(runs, args.process_rounds)
  seconds = {route: [run[0] for run in values]
             for route, values in results.items()}
  peaks = {route: peak for route, (_, peak) in medians(results).items()}
  print_table(
      f"Whole processes (import, load the folder, encode, exit): "
      f"{args.process_rounds} rounds after a warm-up", runs,
      speed_columns(seconds, args.num_sentences) + [
          ("peak memory", lambda route: f"{peaks[route] / 1e9:.2f} GB")])


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
  print(machine.described_in_child())
  routes = chosen_routes(args)
  if not routes:
    raise SystemExit("embeddings: no route to time (--bert_tf_dtypes and "
                     "--peer_backends name none that runs here)")
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
    print(f"{args.num_sentences} sentences of SST-2's train.tsv; load "
          f"average {os.getloadavg()[0]:.2f}")
    time_calls(args, routes, work, texts_file)
    if args.process_rounds:
      time_processes(args, routes, texts_file)
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
