"""run_classifier --do_predict as a whole process: bert_tf against Model Garden.

What it measures: the wall time of a fresh process that predicts SST-2's
test.tsv (1,821 sentences, ../shared/data/glue) with a random BERT of the
model flags (L=4, H=256 by default) at --seq_length 128 and --batch_size 32,
and writes a probability per class and sentence, start-up, imports and
checkpoint restore included:

  bert_tf       run_scripts/run_classifier.py --do_predict, from a checkpoint
                in the released layout (bert_config.json, bert_model.ckpt)
                written here;
  model_garden  a script doing the same with Model Garden's BertClassifier:
                the TSV read with csv, the original's tokenization
                (official.nlp.tools.tokenization), features at full length,
                the model restored from a tf.train.Checkpoint of it written
                here, batches through a tf.function, the probabilities
                written as TSV.

Each job runs once untimed (file caches), then --rounds times alternating;
the medians and their ratio are printed.

    .venv/bin/python benchmarks/prediction_job.py [--rounds=5]
"""

import os
import statistics
import subprocess
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# pylint: disable=g-import-not-at-top,wrong-import-position
import pretrainer_step
from extract_features import timed
from fine_tuning import PROJECT_DIR, SHARED_DIR

import bert_tf
# pylint: enable=g-import-not-at-top,wrong-import-position

# sys.argv[1]: "write" (a checkpoint of the random model) or "predict".
_MODEL_GARDEN_JOB = """
import csv
import sys
import numpy as np
import tensorflow as tf
import tf_keras
from official.nlp.modeling import models, networks
from official.nlp.tools import tokenization

encoder = networks.BertEncoder(
    vocab_size={vocab_size}, hidden_size={hidden_size},
    num_layers={num_layers}, num_attention_heads={num_heads},
    max_sequence_length={max_position_embeddings}, type_vocab_size=2,
    inner_dim={intermediate_size},
    inner_activation=lambda x: tf_keras.activations.gelu(x, approximate=True))
classifier = models.BertClassifier(encoder, num_classes=2)
checkpoint = tf.train.Checkpoint(model=classifier)
if sys.argv[1] == "write":
  checkpoint.write({checkpoint!r})
  sys.exit()
checkpoint.read({checkpoint!r}).expect_partial()
tokenizer = tokenization.FullTokenizer({vocab_file!r}, do_lower_case=True)
with open({test_file!r}, encoding="utf-8") as reader:
  rows = list(csv.reader(reader, delimiter="\\t", quotechar=None))[1:]
seq_length = {seq_length}
features = np.zeros((3, len(rows), seq_length), np.int32)
for row_index, row in enumerate(rows):
  tokens = tokenizer.tokenize(row[1])[:seq_length - 2]
  ids = tokenizer.convert_tokens_to_ids(["[CLS]"] + tokens + ["[SEP]"])
  features[0, row_index, :len(ids)] = ids
  features[1, row_index, :len(ids)] = 1
spec = tf.TensorSpec([None, seq_length], tf.int32)

@tf.function(input_signature=[spec] * 3)
def probabilities(input_word_ids, input_mask, input_type_ids):
  return tf.nn.softmax(classifier(dict(
      input_word_ids=input_word_ids, input_mask=input_mask,
      input_type_ids=input_type_ids), training=False))

with open({output_file!r}, "w", encoding="utf-8") as writer:
  for start in range(0, len(rows), {batch_size}):
    batch = features[:, start:start + {batch_size}]
    for row in probabilities(*batch).numpy():
      writer.write("\\t".join(f"{{value:.8f}}" for value in row) + "\\n")
"""


def parse_args():
  parser = pretrainer_step.model_argument_parser(__doc__.split("\n", 1)[0])
  parser.add_argument("--rounds", type=int, default=5)
  parser.add_argument("--test_file", default=os.path.join(
      SHARED_DIR, "data", "glue", "SST-2", "test.tsv"))
  parser.add_argument("--vocab_file", default=os.path.join(
      SHARED_DIR, "vocab", "bert-base-uncased-vocab.txt"))
  return parser.parse_args()


def bert_tf_job(args, work):
  """run_classifier's command line, and its checkpoint written."""
  config = pretrainer_step.bert_tf_config(args)
  with open(os.path.join(work, "bert_config.json"), "w",
            encoding="utf-8") as writer:
    writer.write(config.to_json_string())
  bert_tf.save_checkpoint(bert_tf.BertEncoder(config),
                          os.path.join(work, "bert_model.ckpt"))
  data_dir = os.path.join(work, "SST-2")
  os.makedirs(data_dir)
  os.symlink(args.test_file, os.path.join(data_dir, "test.tsv"))
  return lambda round_: [
      sys.executable, os.path.join(PROJECT_DIR, "run_scripts",
                                   "run_classifier.py"),
      "--task_name=SST-2", "--do_predict", f"--data_dir={data_dir}",
      f"--vocab_file={args.vocab_file}",
      f"--bert_config_file={work}/bert_config.json",
      f"--init_checkpoint={work}/bert_model.ckpt",
      f"--max_seq_length={args.seq_length}",
      f"--predict_batch_size={args.batch_size}",
      f"--output_dir={work}/bert_tf_{round_}"]


def model_garden_job(args, work):
  """The Model Garden script's command line, and its checkpoint written."""
  script = _MODEL_GARDEN_JOB.format(
      **vars(args), checkpoint=os.path.join(work, "model_garden", "ckpt"),
      max_position_embeddings=pretrainer_step.MAX_POSITION_EMBEDDINGS,
      output_file=os.path.join(work, "model_garden_results.tsv"))
  subprocess.run([sys.executable, "-c", script, "write"], check=True,
                 capture_output=True)
  return lambda round_: [sys.executable, "-c", script, "predict"]


def main():
  args = parse_args()
  with tempfile.TemporaryDirectory(prefix="prediction_job_") as work:
    jobs = {"bert_tf": bert_tf_job(args, work),
            "model_garden": model_garden_job(args, work)}
    seconds = {name: [] for name in jobs}
    for round_ in range(args.rounds + 1):  # the first is untimed
      for name, command in jobs.items():
        took = timed(command(round_))
        if round_:
          seconds[name].append(took)
    ours, theirs = (statistics.median(seconds[name]) for name in jobs)
    print(f"SST-2 test.tsv, L={args.num_layers} H={args.hidden_size}, "
          f"seq {args.seq_length}, batch {args.batch_size}, "
          f"{os.cpu_count()} cores; whole processes, median of "
          f"{args.rounds}")
    print(f"bert_tf {ours:.2f} s, Model Garden {theirs:.2f} s: "
          f"{theirs / ours:.2f}x")


if __name__ == "__main__":
  main()
