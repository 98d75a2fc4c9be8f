"""run_classifier --do_predict as a whole process: bert_tf against Model
Garden, in float32 and in bfloat16.

What it measures: the wall time of a fresh process that predicts SST-2's
test.tsv (1,821 sentences, ../shared/data/glue) with a random BERT of the
model flags (L=4, H=256 by default) at --seq_length 128 and --batch_size 32,
and writes a probability per class and sentence, start-up, imports and
checkpoint restore included, in each dtype of --dtypes:

  bert_tf       run_scripts/run_classifier.py --do_predict --dtype=DTYPE,
                from a checkpoint in the released layout (bert_config.json,
                bert_model.ckpt) written here;
  model_garden  a script doing the same with Model Garden's BertClassifier,
                built under tf_keras' policy of the dtype (mixed_bfloat16
                for bfloat16): the TSV read with csv, the original's
                tokenization (official.nlp.tools.tokenization), features at
                full length, the model restored from a tf.train.Checkpoint
                of it written here, batches through a tf.function, the
                probabilities written as TSV.

Printed first: the CPU and its bfloat16 units. Each job runs once untimed
(file caches), then --rounds times, the jobs alternating; printed: each
job's median, the speed-ups (ratios of medians) of bert_tf against Model
Garden in each dtype and of each stack's bfloat16 against its float32, and
how far each stack's bfloat16 probabilities are from its float32 ones.

    .venv/bin/python benchmarks/prediction_job.py [--rounds=5] \
        [--dtypes=float32,bfloat16]
"""

import functools
import os
import statistics
import subprocess
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# pylint: disable=g-import-not-at-top,wrong-import-position
import machine
import pretrainer_step
from embeddings import names_of
from extract_features import timed
from fine_tuning import PROJECT_DIR, SHARED_DIR

import numpy as np

import bert_tf
from bert_tf.optimization import precision
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

tf_keras.mixed_precision.set_global_policy({policy!r})
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
  return tf.nn.softmax(tf.cast(classifier(dict(
      input_word_ids=input_word_ids, input_mask=input_mask,
      input_type_ids=input_type_ids), training=False), tf.float32))

with open({output_file!r}, "w", encoding="utf-8") as writer:
  for start in range(0, len(rows), {batch_size}):
    batch = features[:, start:start + {batch_size}]
    for row in probabilities(*batch).numpy():
      writer.write("\\t".join(f"{{value:.8f}}" for value in row) + "\\n")
"""


def parse_args(argv=None):
  parser = pretrainer_step.model_argument_parser(__doc__.split("\n", 1)[0])
  parser.add_argument("--rounds", type=int, default=5)
  parser.add_argument("--dtypes", type=names_of(pretrainer_step.DTYPES),
                      default=list(pretrainer_step.DTYPES),
                      help="comma-separated, out of "
                      f"{', '.join(pretrainer_step.DTYPES)}: each job runs "
                      "in each")
  parser.add_argument("--test_file", default=os.path.join(
      SHARED_DIR, "data", "glue", "SST-2", "test.tsv"))
  parser.add_argument("--vocab_file", default=os.path.join(
      SHARED_DIR, "vocab", "bert-base-uncased-vocab.txt"))
  args = parser.parse_args(argv)
  if not args.dtypes:
    parser.error("--dtypes names no dtype")
  return args


def bert_tf_job(args, work):
  """{dtype: (run_classifier's command line of a round, the probabilities
  file it writes)}, its checkpoint written."""
  config = pretrainer_step.bert_tf_config(args)
  with open(os.path.join(work, "bert_config.json"), "w",
            encoding="utf-8") as writer:
    writer.write(config.to_json_string())
  bert_tf.save_checkpoint(bert_tf.BertEncoder(config),
                          os.path.join(work, "bert_model.ckpt"))
  data_dir = os.path.join(work, "SST-2")
  os.makedirs(data_dir)
  os.symlink(args.test_file, os.path.join(data_dir, "test.tsv"))

  def command(dtype, round_):
    return [
        sys.executable, os.path.join(PROJECT_DIR, "run_scripts",
                                     "run_classifier.py"),
        "--task_name=SST-2", "--do_predict", f"--data_dir={data_dir}",
        f"--vocab_file={args.vocab_file}",
        f"--bert_config_file={work}/bert_config.json",
        f"--init_checkpoint={work}/bert_model.ckpt",
        f"--max_seq_length={args.seq_length}",
        f"--predict_batch_size={args.batch_size}", f"--dtype={dtype}",
        f"--output_dir={work}/bert_tf_{dtype}_{round_}"]

  # The last round's output_dir.
  return {dtype: (functools.partial(command, dtype), os.path.join(
      work, f"bert_tf_{dtype}_{args.rounds}", "test_results.tsv"))
          for dtype in args.dtypes}


def model_garden_job(args, work):
  """{dtype: (the Model Garden script's command line of a round, the
  probabilities file it writes)}, its checkpoint written."""
  def output_file(dtype):
    return os.path.join(work, f"model_garden_{dtype}.tsv")

  def script(dtype):
    return _MODEL_GARDEN_JOB.format(
        **vars(args), checkpoint=os.path.join(work, "model_garden", "ckpt"),
        max_position_embeddings=pretrainer_step.MAX_POSITION_EMBEDDINGS,
        policy=precision.POLICIES[dtype], output_file=output_file(dtype))

  def command(dtype, _):
    return [sys.executable, "-c", script(dtype), "predict"]

  # Variables are float32 in every policy: one checkpoint serves all.
  subprocess.run([sys.executable, "-c", script("float32"), "write"],
                 check=True, capture_output=True)
  return {dtype: (functools.partial(command, dtype), output_file(dtype))
          for dtype in args.dtypes}


def largest_difference(file, reference):
  """The largest absolute difference of two probabilities files."""
  return float(np.max(np.abs(np.loadtxt(file, ndmin=2)
                             - np.loadtxt(reference, ndmin=2))))


def main():
  args = parse_args()
  print("\n".join(machine.describe()), flush=True)
  with tempfile.TemporaryDirectory(prefix="prediction_job_") as work:
    stacks = {"bert_tf": bert_tf_job(args, work),
              "model_garden": model_garden_job(args, work)}
    jobs = {(stack, dtype): stacks[stack][dtype] for dtype in args.dtypes
            for stack in stacks}
    seconds = {route: [] for route in jobs}
    for round_ in range(args.rounds + 1):  # the first is untimed
      for route, (command, _) in jobs.items():
        took = timed(command(round_))
        if round_:
          seconds[route].append(took)
    medians = {route: statistics.median(values)
               for route, values in seconds.items()}
    print(f"SST-2 test.tsv, L={args.num_layers} H={args.hidden_size}, "
          f"seq {args.seq_length}, batch {args.batch_size}; whole "
          f"processes, median of {args.rounds}")
    for route, median in medians.items():
      print(f"{pretrainer_step.route_name(route):<22} {median:.2f} s")
    print("speed-ups (the reference's median over the route's; above 1: the "
          "route is faster)")
    for name, ratio in pretrainer_step.speed_ups(medians,
                                                 args.dtypes).items():
      print(f"{name:<48} {ratio:.2f}x")
    if set(pretrainer_step.DTYPES) <= set(args.dtypes):
      for stack in stacks:
        difference = largest_difference(jobs[stack, "bfloat16"][1],
                                        jobs[stack, "float32"][1])
        print(f"{stack}: bfloat16's probabilities differ from float32's by "
              f"at most {difference:.4f}")


if __name__ == "__main__":
  main()
