"""An export's size on disk and the cost of loading it, at BERT-Base size.

What it measures: run_classifier's export (tasks/glue/serving.py, with the
raw-text signature and the vocabulary) of a BertClassifier in the shapes of
uncased_L-12_H-768_A-12 (random weights, 110M parameters, 2 labels), written
into a temporary directory and removed at the end. Printed: the model's
parameter bytes, the bytes of the export's variables on disk and their
ratio (1.00 when each weight is saved once), then the seconds and peak
resident memory of a fresh process that loads the export with
tf.saved_model.load (as TF Serving loads it), against one that only imports
TensorFlow and tensorflow-text, medians of --rounds.

    .venv/bin/python benchmarks/export_size.py [--rounds=3]
"""

import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# pylint: disable=g-import-not-at-top,wrong-import-position
from convert_checkpoint import measured_alternately, medians
import machine
from create_pretraining_data import OFFICIAL_UNCASED
# pylint: enable=g-import-not-at-top,wrong-import-position

# tensorflow-text registers the raw-text signature's ops, as TF Serving has.
_IMPORT = "import sys, tensorflow as tf, tensorflow_text"
_LOAD = _IMPORT + "; tf.saved_model.load(sys.argv[1])"


def write_export(directory):
  """The export of a random BERT-Base classifier into directory; prints
  the model's parameter bytes and the export's version directory."""
  # pylint: disable=g-import-not-at-top
  import numpy as np
  from bert_tf.config import BertConfig
  from bert_tf.files import export
  from bert_tf.models import BertClassifier
  from bert_tf.tasks.glue.serving import classifier_serving
  from bert_tf.text.tokenizer import InGraphTokenizer
  # pylint: enable=g-import-not-at-top
  model = BertClassifier(BertConfig(
      vocab_size=30522, hidden_size=768, num_hidden_layers=12,
      num_attention_heads=12, intermediate_size=3072), 2)
  serving, signatures = classifier_serving(
      model, InGraphTokenizer(OFFICIAL_UNCASED, True), 128, ["0", "1"],
      text_pairs=True)
  print(sum(np.asarray(weight).nbytes for weight in model.weights),
        export.write_saved_model(serving, directory, signatures))


def directory_bytes(path):
  return sum(os.path.getsize(os.path.join(folder, name))
             for folder, _, names in os.walk(path) for name in names)


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--rounds", type=int, default=3)
  parser.add_argument("--write_export", help=argparse.SUPPRESS)
  args = parser.parse_args()
  print(machine.described_in_child(), flush=True)
  if args.write_export:
    write_export(args.write_export)
    return
  with tempfile.TemporaryDirectory(prefix="export_benchmark_") as work:
    # In a process of its own: a child's peak memory counts the pages it
    # shares with this process when forked, so this one stays small.
    parameter_bytes, version_dir = subprocess.run(
        [sys.executable, __file__, f"--write_export={work}"],
        capture_output=True, text=True, check=True).stdout.split()[-2:]
    parameter_bytes = int(parameter_bytes)
    variables = directory_bytes(os.path.join(version_dir, "variables"))
    print(f"parameters {parameter_bytes / 1e6:.1f} MB, the export's variables "
          f"{variables / 1e6:.1f} MB ({variables / parameter_bytes:.2f}x), "
          f"the whole export {directory_bytes(version_dir) / 1e6:.1f} MB")
    runs = {"load the export": lambda _: [sys.executable, "-c", _LOAD,
                                          version_dir],
            "only the imports": lambda _: [sys.executable, "-c", _IMPORT]}
    print(f"{'process':<18} {'seconds':>8} {'peak MB':>8}  "
          f"(median of {args.rounds})")
    for name, (seconds, peak) in medians(
        measured_alternately(runs, args.rounds)).items():
      print(f"{name:<18} {seconds:>8.2f} {peak / 1e6:>8.0f}")


if __name__ == "__main__":
  main()
