"""Pretraining throughput: bert_tf's Trainer against TF Model Garden.

What it measures: training examples/sec of whole training loops, reading the
same pretraining TFRecords, for

  * bert_tf: run_pretraining's machinery (pretraining_dataset,
    BertPretrainer, the original AdamWeightDecay with global-norm clipping
    and the warmup/decay schedule, Trainer.train_steps on OneDeviceStrategy),
  * Model Garden: BertPretrainerV2 (legacy tf_keras) with Model Garden's own
    port of the original optimizer (official.nlp.optimization.
    create_optimizer, "adamw", which clips to global norm 1.0 too), fed by
    its BertPretrainDataLoader, its steps run in a tf.function loop of the
    same length.

For each --dtype (float32, bfloat16) and XLA setting (off, on), both are
built, warmed up for one loop (tracing and compilation), then timed loops of
--loop_steps alternate between them, swapping which goes first every round.
Printed: examples/sec of each and the ratio bert_tf / Model Garden (above 1
means bert_tf is faster).

Run from the repository root:

  .venv/bin/python benchmarks/pretraining.py [--output_json=/tmp/p.json]

BERT-Base on a GPU (bfloat16 and XLA only):

  .venv/bin/python benchmarks/pretraining.py --num_layers=12 \\
      --hidden_size=768 --num_heads=12 --intermediate_size=3072 \\
      --batch_size=128 --dtypes=bfloat16 --xla=on

Tiny smoke run:

  .venv/bin/python benchmarks/pretraining.py --num_layers=1 --hidden_size=32 \\
      --num_heads=2 --intermediate_size=37 --seq_length=16 --batch_size=4 \\
      --num_predictions=3 --loop_steps=2 --rounds=1
"""

import argparse
import json
import os
import sys
import tempfile
import time
import warnings

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
warnings.filterwarnings("ignore", message="Input dict contained keys")

import keras  # pylint: disable=g-import-not-at-top
import tensorflow as tf
import tf_keras
from official.nlp import optimization as mg_optimization
from official.nlp.data import pretrain_dataloader

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# pylint: disable=g-import-not-at-top,wrong-import-position
import pretrainer_step
import machine
import bert_tf
from bert_tf.objectives.pretraining import PretrainingObjective
from bert_tf.pretraining.dataset import pretraining_dataset
from bert_tf.training.trainer import TrainingOptions, create_trainer
# pylint: enable=g-import-not-at-top,wrong-import-position

NUM_TRAIN_STEPS = 100000  # for the schedules only
NUM_WARMUP_STEPS = 10
EXAMPLES_PER_FILE_BATCH = 16  # the file holds this many batches


def parse_args():
  parser = pretrainer_step.model_argument_parser(__doc__.split("\n", 1)[0])
  parser.add_argument("--loop_steps", type=int, default=5,
                      help="steps per tf.function call (iterations_per_loop)")
  parser.add_argument("--rounds", type=int, default=3,
                      help="timed loops per implementation and setting")
  parser.add_argument("--dtypes", default="float32,bfloat16")
  parser.add_argument("--xla", default="off,on",
                      help="comma-separated subset of off,on")
  parser.add_argument("--output_json", default=None)
  return parser.parse_args()


def write_records(args, path):
  """Random pretraining examples with the original's feature names."""
  batch_args = argparse.Namespace(**{
      **vars(args), "batch_size": args.batch_size * EXAMPLES_PER_FILE_BATCH})
  batch = pretrainer_step.make_batch(batch_args)
  with tf.io.TFRecordWriter(path) as writer:
    for index in range(batch_args.batch_size):
      feature = {}
      for name, values in batch.items():
        row = values[index].reshape(-1)
        feature[name] = (
            tf.train.Feature(float_list=tf.train.FloatList(value=row))
            if values.dtype.kind == "f" else
            tf.train.Feature(int64_list=tf.train.Int64List(value=row)))
      writer.write(tf.train.Example(features=tf.train.Features(
          feature=feature)).SerializeToString())


def bert_tf_runner(args, build_model, objective, dataset, dtype, use_xla,
                   output_dir):
  """A function that runs loop_steps steps of bert_tf's Trainer (its
  create_trainer, as every runner makes it) and syncs."""
  strategy = tf.distribute.OneDeviceStrategy(
      "/gpu:0" if tf.config.list_physical_devices("GPU") else "/cpu:0")
  trainer = create_trainer(
      strategy, build_model, objective, output_dir,
      TrainingOptions(num_train_steps=NUM_TRAIN_STEPS, use_xla=use_xla,
                      dtype=dtype),
      pretrainer_step.LEARNING_RATE, NUM_WARMUP_STEPS)
  iterator = trainer.iterator(dataset)
  return lambda: trainer.train_steps(iterator, args.loop_steps)["loss"]


def model_garden_runner(args, path, dtype, use_xla):
  """Model Garden's model, optimizer and data loader in the same loop."""
  dataset = pretrain_dataloader.BertPretrainDataLoader(
      pretrain_dataloader.BertPretrainDataConfig(
          input_path=path, global_batch_size=args.batch_size,
          seq_length=args.seq_length,
          max_predictions_per_seq=args.num_predictions,
          is_training=True)).load()
  iterator = iter(dataset.map(lambda batch: {
      "input_ids": batch["input_word_ids"],
      "input_mask": batch["input_mask"],
      "segment_ids": batch["input_type_ids"],
      **{name: batch[name] for name in (
          "masked_lm_positions", "masked_lm_ids", "masked_lm_weights",
          "next_sentence_labels")}}))
  with pretrainer_step.model_garden_dtype_policy(dtype):
    model, head, model_inputs, loss_fn = \
        pretrainer_step.model_garden_pretrainer(args)
    model(model_inputs(next(iterator)))  # the masked-LM head builds lazily
  return model_garden_loop(
      args, loss_fn, model.trainable_variables + head.trainable_variables,
      iterator, use_xla)


def model_garden_loop(args, loss_fn, variables, iterator, use_xla):
  """A function that runs loop_steps steps of Model Garden's optimizer on
  loss_fn(batch, training) in a tf.function loop, as long as bert_tf's,
  and syncs."""
  optimizer = mg_optimization.create_optimizer(
      pretrainer_step.LEARNING_RATE, NUM_TRAIN_STEPS, NUM_WARMUP_STEPS,
      optimizer_type="adamw")

  @tf.function(jit_compile=use_xla)
  def gradients(batch):
    with tf.GradientTape() as tape:
      loss = loss_fn(batch, training=True)
    return loss, tape.gradient(loss, variables)

  @tf.function
  def loop(num_steps):
    total = 0.0
    for _ in tf.range(num_steps):
      loss, grads = gradients(next(iterator))
      # Variables the loss does not reach (a span labeler's pooler) are
      # left alone, as bert_tf's Trainer leaves them.
      optimizer.apply_gradients([
          (grad, variable) for grad, variable in zip(grads, variables)
          if grad is not None])
      total += loss
    return total / tf.cast(num_steps, tf.float32)

  return lambda: float(loop(tf.constant(args.loop_steps)))


def time_alternately(runners, rounds, use_xla):
  """Calls each runner once untimed (tracing and compilation), then `rounds`
  times each, swapping which goes first every round, so that machine noise
  hits them alike.

  Args:
    runners: {name: a function that runs and syncs, returning a float}.

  Returns:
    {name: [seconds of each timed call]}.
  """
  for name, run in runners.items():
    start = time.perf_counter()
    value = run()
    print(f"  {name}: first call (trace{' + XLA' if use_xla else ''}) "
          f"{time.perf_counter() - start:.1f} s, returned {value:.3f}",
          flush=True)
  seconds = {name: [] for name in runners}
  for round_index in range(rounds):
    order = list(runners)[::-1 if round_index % 2 else 1]
    for name in order:
      start = time.perf_counter()
      runners[name]()
      seconds[name].append(time.perf_counter() - start)
  return seconds


def examples_per_sec(args, runners, use_xla):
  """Examples/sec of runners that each process loop_steps batches of
  batch_size a call, over args.rounds alternating calls."""
  seconds = time_alternately(runners, args.rounds, use_xla)
  examples = args.rounds * args.loop_steps * args.batch_size
  return {name: examples / sum(value) for name, value in seconds.items()}


def measure(args, path, dtype, use_xla):
  """Pretraining examples/sec of bert_tf and Model Garden on the records."""
  dataset = pretraining_dataset([path], args.seq_length, args.num_predictions,
                                args.batch_size, is_training=True)
  with tempfile.TemporaryDirectory() as output_dir:
    runners = {
        "bert_tf": bert_tf_runner(
            args, lambda: bert_tf.BertPretrainer(
                pretrainer_step.bert_tf_config(args)),
            PretrainingObjective(), dataset, dtype, use_xla, output_dir),
        "model_garden": model_garden_runner(args, path, dtype, use_xla)}
    return examples_per_sec(args, runners, use_xla)


def main():
  args = parse_args()
  print(machine.described_in_child(), flush=True)
  keras.utils.set_random_seed(pretrainer_step.SEED)
  device = "GPU" if tf.config.list_physical_devices("GPU") else "CPU"
  results = []
  with tempfile.TemporaryDirectory() as data_dir:
    path = os.path.join(data_dir, "examples.tfrecord")
    write_records(args, path)
    for dtype in args.dtypes.split(","):
      for xla in args.xla.split(","):
        print(f"dtype={dtype} xla={xla}", flush=True)
        rates = measure(args, path, dtype, xla == "on")
        results.append({"dtype": dtype, "xla": xla, **rates,
                        "ratio": rates["bert_tf"] / rates["model_garden"]})

  print(f"\nPretraining examples/sec on {device}: layers={args.num_layers} "
        f"hidden={args.hidden_size} seq={args.seq_length} "
        f"batch={args.batch_size}, {args.rounds} x {args.loop_steps} steps")
  print(f"{'dtype':<9} {'xla':<4} {'bert_tf':>9} {'model_garden':>13} "
        f"{'ratio':>6}")
  for row in results:
    print(f"{row['dtype']:<9} {row['xla']:<4} {row['bert_tf']:>9.1f} "
          f"{row['model_garden']:>13.1f} {row['ratio']:>6.2f}")
  print("ratio = bert_tf / model_garden examples/sec; above 1: bert_tf faster")
  if args.output_json:
    with open(args.output_json, "w") as writer:
      json.dump({"config": vars(args), "device": device, "results": results},
                writer, indent=2)


if __name__ == "__main__":
  main()
