"""Peak memory of a BERT-Base fine-tuning run: bert_tf against Model Garden.

What it measures: the peak resident memory and wall time of a fresh process
fine-tuning a random BERT in the shapes of uncased_L-12_H-768_A-12 on MRPC
(../shared/data/glue/MRPC) for 3 steps of batch 32 at max_seq_length 128,
then evaluating on the dev set and exporting a SavedModel:

  bert_tf       the original README's MRPC command (run_classifier.py
                --do_train --do_eval --export_dir), --num_train_epochs cut
                to 3 steps, from a checkpoint in the released layout
                written here;
  model_garden  a script doing the same with Model Garden's BertClassifier:
                the TSVs read with csv, the original's tokenization
                (official.nlp.tools.tokenization), its encoder restored
                from a tf.train.Checkpoint written here, compile/fit with
                Model Garden's AdamW (official.nlp.optimization), evaluate,
                tf.saved_model.save.

Each runs --rounds times, alternating; the medians are printed. The parent
process imports no TensorFlow (a child's peak counts the pages it shares
with its parent when forked).

    .venv/bin/python benchmarks/fine_tuning_memory.py [--rounds=1]
"""

import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# pylint: disable=g-import-not-at-top,wrong-import-position
from convert_checkpoint import PROJECT_DIR, measured_alternately, medians
import machine
# pylint: enable=g-import-not-at-top,wrong-import-position

SHARED_DIR = os.path.join(os.path.dirname(PROJECT_DIR), "shared")
MRPC_DIR = os.path.join(SHARED_DIR, "data", "glue", "MRPC")
VOCAB = os.path.join(SHARED_DIR, "vocab", "bert-base-uncased-vocab.txt")
BERT_BASE = dict(vocab_size=30522, hidden_size=768, num_hidden_layers=12,
                 num_attention_heads=12, intermediate_size=3072)
STEPS, BATCH_SIZE, SEQ_LENGTH = 3, 32, 128

# sys.argv[1]: "write" (the encoder's checkpoint) or "run".
_MODEL_GARDEN_JOB = """
import csv
import sys
import numpy as np
import tensorflow as tf
import tf_keras
from official.nlp import optimization
from official.nlp.modeling import models, networks
from official.nlp.tools import tokenization

work, mrpc_dir, vocab = sys.argv[2:5]
encoder = networks.BertEncoder(
    vocab_size={vocab_size}, hidden_size={hidden_size},
    num_layers={num_hidden_layers}, num_attention_heads={num_attention_heads},
    inner_dim={intermediate_size}, max_sequence_length=512,
    inner_activation=lambda x: tf_keras.activations.gelu(x, approximate=True))
if sys.argv[1] == "write":
  tf.train.Checkpoint(encoder=encoder).write(work + "/model_garden/encoder")
  sys.exit()
tf.train.Checkpoint(encoder=encoder).read(
    work + "/model_garden/encoder").expect_partial()
tokenizer = tokenization.FullTokenizer(vocab, do_lower_case=True)

def features(split):
  with open(f"{{mrpc_dir}}/{{split}}.tsv", encoding="utf-8") as reader:
    rows = list(csv.reader(reader, delimiter="\\t", quotechar=None))[1:]
  ids = np.zeros((3, len(rows), {seq_length}), np.int32)
  for index, row in enumerate(rows):
    a, b = tokenizer.tokenize(row[3]), tokenizer.tokenize(row[4])
    while len(a) + len(b) > {seq_length} - 3:
      (a if len(a) > len(b) else b).pop()
    tokens = ["[CLS]"] + a + ["[SEP]"] + b + ["[SEP]"]
    length = len(tokens)
    ids[0, index, :length] = tokenizer.convert_tokens_to_ids(tokens)
    ids[1, index, :length] = 1
    ids[2, index, len(a) + 2:length] = 1
  inputs = dict(input_word_ids=ids[0], input_mask=ids[1],
                input_type_ids=ids[2])
  return inputs, np.array([int(row[0]) for row in rows], np.int32)

classifier = models.BertClassifier(encoder, num_classes=2)
classifier.compile(
    optimizer=optimization.create_optimizer(2e-5, {steps}, 0),
    loss=tf_keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=["accuracy"])
train_inputs, train_labels = features("train")
classifier.fit(train_inputs, train_labels, batch_size={batch_size},
               steps_per_epoch={steps}, epochs=1, verbose=0)
dev_inputs, dev_labels = features("dev")
print(classifier.evaluate(dev_inputs, dev_labels, batch_size={batch_size},
                          verbose=0))
tf.saved_model.save(classifier, work + "/model_garden_export")
"""

# sys.argv[1]: the directory for bert_config.json and bert_model.ckpt.
_WRITE_BERT_TF_CHECKPOINT = """
import sys
import bert_tf
config = bert_tf.BertConfig(**{config!r})
with open(sys.argv[1] + "/bert_config.json", "w", encoding="utf-8") as writer:
  writer.write(config.to_json_string())
bert_tf.save_checkpoint(bert_tf.BertEncoder(config),
                        sys.argv[1] + "/bert_model.ckpt")
"""


def bert_tf_command(work, round_):
  """The README's MRPC command, cut to STEPS steps."""
  with open(os.path.join(MRPC_DIR, "train.tsv"), encoding="utf-8") as reader:
    train_examples = sum(1 for _ in reader) - 1
  return [sys.executable, os.path.join(PROJECT_DIR, "run_scripts",
                                       "run_classifier.py"),
          "--task_name=MRPC", "--do_train", "--do_eval",
          f"--data_dir={MRPC_DIR}", f"--vocab_file={VOCAB}",
          f"--bert_config_file={work}/bert_config.json",
          f"--init_checkpoint={work}/bert_model.ckpt",
          f"--max_seq_length={SEQ_LENGTH}",
          f"--train_batch_size={BATCH_SIZE}", "--learning_rate=2e-5",
          f"--num_train_epochs={(STEPS + 0.5) * BATCH_SIZE / train_examples}",
          f"--output_dir={work}/bert_tf_{round_}",
          f"--export_dir={work}/bert_tf_export_{round_}"]


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--rounds", type=int, default=1)
  args = parser.parse_args()
  print(machine.described_in_child(), flush=True)
  model_garden = _MODEL_GARDEN_JOB.format(
      **BERT_BASE, steps=STEPS, batch_size=BATCH_SIZE, seq_length=SEQ_LENGTH)
  with tempfile.TemporaryDirectory(prefix="fine_tuning_memory_") as work:
    subprocess.run([sys.executable, "-c", _WRITE_BERT_TF_CHECKPOINT.format(
        config=BERT_BASE), work], check=True, cwd=PROJECT_DIR)
    subprocess.run([sys.executable, "-c", model_garden, "write", work,
                    MRPC_DIR, VOCAB], check=True)
    runs = {"bert_tf": lambda round_: bert_tf_command(work, round_),
            "model_garden": lambda round_: [
                sys.executable, "-c", model_garden, "run", work, MRPC_DIR,
                VOCAB]}
    results = medians(measured_alternately(runs, args.rounds))
    print(f"MRPC, BERT-Base shapes, {STEPS} steps of batch {BATCH_SIZE} at "
          f"{SEQ_LENGTH}, eval and export, {os.cpu_count()} cores; median of "
          f"{args.rounds}")
    for name, (seconds, peak) in results.items():
      print(f"{name:<13} {seconds:>7.1f} s {peak / 1e9:>6.2f} GB peak")


if __name__ == "__main__":
  main()
