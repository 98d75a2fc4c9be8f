"""The embedded default job: BERT end to end, from raw text to a served model.

Everything runs offline on a laptop-sized CPU in a few minutes, each stage
with the project's own run scripts (their command lines are printed, to
copy):

  1. a corpus: the docstrings of Python's standard library;
  2. a WordPiece vocabulary learned from it;
  3. create_pretraining_data: masked-LM / next-sentence TFRecords;
  4. run_pretraining: a tiny BERT for a few hundred steps, then evaluated;
  5. a small task in SST-2's file format: does a docstring sentence come
     from a module about files and processes, or one about text and data
     formats?
  6. run_classifier: fine-tuned from the pretrained checkpoint, evaluated,
     and exported as a TF Serving SavedModel;
  7. the export queried with raw text through its serve_text signature.

    python run_scripts/demo.py --output_dir=demo_output
"""

import os
import random
import subprocess
import sys
import time

from absl import flags

import program
from bert_tf.files import atomic_outputs, output_paths, storage

flags.DEFINE_string("output_dir", "demo_output", "Where every stage writes.")
flags.DEFINE_integer("pretraining_steps", 1000, "run_pretraining steps.")
flags.DEFINE_float("num_train_epochs", 5.0, "run_classifier epochs.")
FLAGS = flags.FLAGS

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
MAX_SEQ_LENGTH = 64
TINY_CONFIG = ('{{"vocab_size": {vocab_size}, "hidden_size": 64, '
               '"num_hidden_layers": 2, "num_attention_heads": 4, '
               '"intermediate_size": 128, "max_position_embeddings": 64}}')
# The fine-tuning task's two topics: standard library modules by subject.
TOPICS = {
    "0": ("text and data formats",
          "base64,configparser,csv,difflib,html,json,pickle,re,shlex,string,"
          "struct,textwrap,tokenize"),
    "1": ("files and processes",
          "fnmatch,glob,gzip,os,pathlib,queue,sched,shutil,subprocess,"
          "tarfile,tempfile,threading,zipfile"),
}
QUERIES = ["Remove the directory and every file inside it.",
           "Return the string with all the lines wrapped.",
           "Wait until the child process terminates."]


def run_stage(number, title, script, **flag_values):
  """Runs run_scripts/<script> with --name=value flags, printing it."""
  command = [sys.executable, os.path.join(SCRIPTS, script)] + [
      f"--{name}={value}" for name, value in flag_values.items()]
  print(f"\n[{number}] {title}\n$ python run_scripts/{script} " + " ".join(
      command[2:]), flush=True)
  start = time.time()
  result = subprocess.run(command, capture_output=True, text=True,
                          check=False)
  if result.returncode:
    sys.exit(f"demo: stage {number} failed:\n{result.stderr[-3000:]}")
  print(f"    done in {time.time() - start:.0f} s", flush=True)


def path(*parts):
  return os.path.join(FLAGS.output_dir, *parts)


def show(file_name, lines=None):
  with open(path(file_name), encoding="utf-8") as reader:
    content = reader.read().splitlines()
  for line in content[:lines]:
    print(f"    {line}")


def write_topic_task(task_dir, seed=12345):
  """SST-2-format train/dev/test files of the topics' docstring sentences,
  written by the corpus script once per topic."""
  rows = []
  for label, (_, modules) in TOPICS.items():
    corpus = os.path.join(task_dir, f"topic_{label}.txt")
    run_stage(5, f"Sentences about {TOPICS[label][0]}",
              "make_docstring_corpus.py", output_file=corpus, modules=modules)
    with open(corpus, encoding="utf-8") as reader:
      rows.extend((line.strip(), label) for line in reader if line.strip())
  rng = random.Random(seed)
  rng.shuffle(rows)
  size = len(rows)
  splits = {"train": rows[:size * 8 // 10], "dev": rows[size * 8 // 10:-50],
            "test": rows[-50:]}
  for split, split_rows in splits.items():
    header = "index\tsentence" if split == "test" else "sentence\tlabel"
    tsv_path = os.path.join(task_dir, f"{split}.tsv")
    with atomic_outputs.atomic_write(tsv_path) as out:
      out.write(header + "\n")
      for index, (sentence, label) in enumerate(split_rows):
        out.write(f"{index}\t{sentence}\n" if split == "test"
                  else f"{sentence}\t{label}\n")
    print(f"    {split}.tsv: {len(split_rows)} sentences")


def query_export(export_dir):
  """Loads the newest export as TF Serving would, and asks it in words."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import tensorflow_text  # pylint: disable=g-import-not-at-top,unused-import
  version = max(int(name) for name in os.listdir(export_dir) if name.isdigit())
  serving = tf.saved_model.load(os.path.join(export_dir, str(version)))
  answer = serving.signatures["serve_text"](text_a=tf.constant(QUERIES))
  print(f"    loaded {export_dir}/{version}, signatures "
        f"{sorted(serving.signatures)}")
  for query, probabilities, label in zip(
      QUERIES, answer["probabilities"].numpy(), answer["labels"].numpy()):
    print(f"    {query!r} -> {TOPICS[label.decode()][0]} "
          f"(P = {probabilities.max():.2f})")


def main(_):
  start = time.time()
  output_paths.check_outputs(output_dirs=[("--output_dir", FLAGS.output_dir)])
  storage.makedirs(FLAGS.output_dir)
  run_stage(1, "A corpus from Python's docstrings",
            "make_docstring_corpus.py", output_file=path("corpus.txt"))
  run_stage(2, "A WordPiece vocabulary learned from it", "build_vocab.py",
            input_file=path("corpus.txt"), output_file=path("vocab.txt"),
            vocab_size=2000, min_count=5)
  with open(path("vocab.txt"), encoding="utf-8") as reader:
    vocab_size = sum(1 for _ in reader)
  with atomic_outputs.atomic_write(path("bert_config.json")) as writer:
    writer.write(TINY_CONFIG.format(vocab_size=vocab_size) + "\n")
  print(f"    {vocab_size} tokens; tiny model config: "
        f"{TINY_CONFIG.format(vocab_size=vocab_size)}")
  run_stage(3, "Masked-LM / next-sentence pretraining data",
            "create_pretraining_data.py", input_file=path("corpus.txt"),
            output_file=path("pretraining_data.tfrecord"),
            vocab_file=path("vocab.txt"), do_lower_case=True,
            max_seq_length=MAX_SEQ_LENGTH, max_predictions_per_seq=10,
            dupe_factor=5)
  run_stage(4, "Pretraining a tiny BERT", "run_pretraining.py",
            input_file=path("pretraining_data.tfrecord"),
            output_dir=path("pretraining"),
            bert_config_file=path("bert_config.json"), do_train=True,
            do_eval=True, train_batch_size=32, eval_batch_size=32,
            max_seq_length=MAX_SEQ_LENGTH, max_predictions_per_seq=10,
            learning_rate=1e-3, num_train_steps=FLAGS.pretraining_steps,
            num_warmup_steps=FLAGS.pretraining_steps // 10,
            save_checkpoints_steps=FLAGS.pretraining_steps,
            iterations_per_loop=50, max_eval_steps=20)
  show(os.path.join("pretraining", "eval_results.txt"))

  write_topic_task(path("topic_task"))
  run_stage(6, "Fine-tuning run_classifier from the pretrained checkpoint, "
            "then exporting", "run_classifier.py", task_name="SST-2",
            data_dir=path("topic_task"), vocab_file=path("vocab.txt"),
            bert_config_file=path("bert_config.json"),
            init_checkpoint=path("pretraining",
                                 f"model.ckpt-{FLAGS.pretraining_steps}"),
            do_lower_case=True, do_train=True, do_eval=True, do_predict=True,
            max_seq_length=MAX_SEQ_LENGTH, train_batch_size=32,
            learning_rate=1e-3, num_train_epochs=FLAGS.num_train_epochs,
            iterations_per_loop=50, output_dir=path("classifier"),
            export_dir=path("export"))
  show(os.path.join("classifier", "eval_results.txt"))
  print("    SST-2.tsv (GLUE submission format):")
  show(os.path.join("classifier", "SST-2.tsv"), lines=3)

  print("\n[7] Querying the SavedModel with raw text (serve_text)")
  query_export(path("export"))
  print(f"\nAll stages done in {time.time() - start:.0f} s; everything is in "
        f"{FLAGS.output_dir}/")


if __name__ == "__main__":
  program.run(main)
