"""Times one BERT pretraining train step: bert_tf against TF Model Garden,
in float32 and in bfloat16.

What it measures: the wall time of one training step (forward pass, masked-LM
+ next-sentence loss, backward pass and Adam update) inside a `tf.function`
(optionally `jit_compile=True`), for

  * bert_tf.BertPretrainer (Keras 3) trained with keras.optimizers.Adam, and
  * official.nlp.modeling.models.BertPretrainerV2 around
    official.nlp.modeling.networks.BertEncoder (legacy tf_keras), trained with
    tf_keras.optimizers.Adam,

each in every dtype of --dtypes (bfloat16: each library's mixed_bfloat16
policy, float32 variables and bfloat16 computation), built from the same
config and fed the same synthetic batch (numpy, fixed seed). Each stack and
dtype, a route, runs in a process of its own (in one process, each disturbs
the other's memory, caches and thread pools), traced/compiled and warmed up
for --warmup_steps; then the timed steps go round the routes' processes,
one at a time (each round starting at the next route), so that the
machine's drift hits all alike. Each step is synchronised by fetching the
loss (`float(loss)`).

The two models have the same parameters: Model Garden's next-sentence head is
a Dense(2) on the encoder's pooled output, as in the original BERT and in
bert_tf. (Model Garden's own MaskedLMTask would add a second pooler inside a
ClassificationHead instead.) Both losses are
sum(weights * nll) / (sum(weights) + 1e-5) over the masked positions plus the
mean next-sentence nll; bert_tf uses its own loss functions, Model Garden the
same formula in TensorFlow ops.

Printed: the CPU and its bfloat16 units; mean and median ms/step and
examples/s of each route; the ratios of median steps: Model Garden's over
bert_tf's in each dtype (above 1 means bert_tf is faster) and, for each
stack, float32's over bfloat16's (above 1 means bfloat16 is faster).

Run from the repository root (the figures in docs/performance.md: 4 layers,
hidden 256, seq 128, batch 16):

  .venv/bin/python benchmarks/pretrainer_step.py --batch_size=16 \
      [--dtypes=float32,bfloat16] [--jit_compile] \
      [--output_json=/tmp/pretrainer_step.json]

Tiny smoke run:

  .venv/bin/python benchmarks/pretrainer_step.py --num_layers=1 \
      --hidden_size=32 --num_heads=2 --intermediate_size=37 --seq_length=16 \
      --batch_size=4 --num_predictions=3 --steps=2 --warmup_steps=1
"""

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
import warnings

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# BertPretrainerV2 passes masked_lm_positions on to its encoder by design.
warnings.filterwarnings("ignore", message="Input dict contained keys")

import keras  # pylint: disable=g-import-not-at-top
import numpy as np
import tensorflow as tf
import tf_keras
from official.nlp.modeling import models as mg_models
from official.nlp.modeling import networks as mg_networks

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# pylint: disable=g-import-not-at-top,wrong-import-position
import machine
from embeddings import names_of

import bert_tf
from bert_tf.optimization import precision
# pylint: enable=g-import-not-at-top,wrong-import-position

SEED = 1234
LEARNING_RATE = 1e-4
DROPOUT = 0.1
INITIALIZER_RANGE = 0.02
MAX_POSITION_EMBEDDINGS = 512
TYPE_VOCAB_SIZE = 2
DTYPES = ("float32", "bfloat16")


def model_argument_parser(description):
  """Flags for the model and batch shape, shared by the benchmarks."""
  parser = argparse.ArgumentParser(
      description=description,
      formatter_class=argparse.ArgumentDefaultsHelpFormatter)
  parser.add_argument("--num_layers", type=int, default=4)
  parser.add_argument("--hidden_size", type=int, default=256)
  parser.add_argument("--num_heads", type=int, default=4)
  parser.add_argument("--intermediate_size", type=int, default=1024)
  parser.add_argument("--vocab_size", type=int, default=30522)
  parser.add_argument("--seq_length", type=int, default=128)
  parser.add_argument("--batch_size", type=int, default=32)
  parser.add_argument("--num_predictions", type=int, default=20,
                      help="masked-LM predictions per sequence")
  return parser


def parse_args(argv=None):
  parser = model_argument_parser(__doc__.split("\n", 1)[0])
  parser.add_argument("--steps", type=int, default=20,
                      help="timed steps per route")
  parser.add_argument("--warmup_steps", type=int, default=3,
                      help="untimed steps first (the first one traces)")
  parser.add_argument("--jit_compile", action="store_true",
                      help="compile the train steps with XLA")
  parser.add_argument("--dtypes", type=names_of(DTYPES),
                      default=list(DTYPES),
                      help="comma-separated, out of "
                      f"{', '.join(DTYPES)}: each stack runs in each")
  parser.add_argument("--output_json", default=None,
                      help="also write the results to this file")
  parser.add_argument("--worker", choices=sorted(BUILDERS),
                      help=argparse.SUPPRESS)
  parser.add_argument("--worker_dtype", choices=DTYPES,
                      help=argparse.SUPPRESS)
  args = parser.parse_args(argv)
  if args.warmup_steps < 1 or args.steps < 1:
    parser.error("--warmup_steps and --steps must be at least 1")
  if not args.dtypes:
    parser.error("--dtypes names no dtype")
  if args.num_predictions > args.seq_length:
    parser.error("--num_predictions must not exceed --seq_length")
  return args


def make_batch(args):
  """A pretraining batch with padding, two segments and padded predictions."""
  rng = np.random.default_rng(SEED)
  batch, seq, preds = args.batch_size, args.seq_length, args.num_predictions
  lengths = rng.integers(max(preds, seq // 2), seq + 1, size=batch)
  position = np.arange(seq)[None, :]
  input_mask = (position < lengths[:, None]).astype(np.int32)
  input_ids = rng.integers(1, args.vocab_size, size=(batch, seq)) * input_mask
  split = rng.integers(1, lengths)[:, None]
  segment_ids = ((position >= split) * input_mask).astype(np.int32)
  masked_lm_positions = np.stack(
      [np.sort(rng.choice(length, size=preds, replace=False))
       for length in lengths])
  num_real = rng.integers(1, preds + 1, size=batch)
  masked_lm_weights = (np.arange(preds)[None, :] < num_real[:, None])
  return {
      "input_ids": input_ids.astype(np.int32),
      "input_mask": input_mask,
      "segment_ids": segment_ids,
      "masked_lm_positions": masked_lm_positions.astype(np.int32),
      "masked_lm_ids": rng.integers(
          0, args.vocab_size, size=(batch, preds)).astype(np.int32),
      "masked_lm_weights": masked_lm_weights.astype(np.float32),
      "next_sentence_labels": rng.integers(0, 2, size=batch).astype(np.int32),
  }


def count_params(variables):
  return int(sum(np.prod(variable.shape) for variable in variables))


def bert_tf_config(args):
  """The bert_tf.BertConfig of the model flags."""
  return bert_tf.BertConfig(
      vocab_size=args.vocab_size,
      hidden_size=args.hidden_size,
      num_hidden_layers=args.num_layers,
      num_attention_heads=args.num_heads,
      intermediate_size=args.intermediate_size,
      hidden_act="gelu",
      hidden_dropout_prob=DROPOUT,
      attention_probs_dropout_prob=DROPOUT,
      max_position_embeddings=MAX_POSITION_EMBEDDINGS,
      type_vocab_size=TYPE_VOCAB_SIZE,
      initializer_range=INITIALIZER_RANGE)


def build_bert_tf_step(args, batch, dtype):
  """bert_tf.BertPretrainer in `dtype` + keras.optimizers.Adam:
  (step_fn, num_params)."""
  del batch  # BertPretrainer has all its weights once constructed.
  with precision.dtype_policy(dtype):
    model = bert_tf.BertPretrainer(bert_tf_config(args))
  optimizer = keras.optimizers.Adam(LEARNING_RATE)
  variables = model.trainable_variables

  @tf.function(jit_compile=args.jit_compile)
  def step(batch):
    with tf.GradientTape() as tape:
      outputs = model(
          {name: batch[name] for name in ("input_ids", "input_mask",
                                          "segment_ids",
                                          "masked_lm_positions")},
          training=True)
      loss = bert_tf.pretraining_loss(outputs, batch)
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
    return loss

  return step, count_params(variables)


def _gelu(x):
  """The original's gelu (the tanh approximation), in tf_keras."""
  return tf_keras.activations.gelu(x, approximate=True)


def model_garden_initializer():
  """The original's initializer, for Model Garden's layers and heads."""
  return tf_keras.initializers.TruncatedNormal(stddev=INITIALIZER_RANGE)


def model_garden_inputs(batch):
  """A batch in the original's feature names, in Model Garden's."""
  return {"input_word_ids": batch["input_ids"],
          "input_mask": batch["input_mask"],
          "input_type_ids": batch["segment_ids"]}


def model_garden_encoder(args):
  """Model Garden's BertEncoder (legacy tf_keras) of the model flags."""
  return mg_networks.BertEncoder(
      vocab_size=args.vocab_size,
      hidden_size=args.hidden_size,
      num_layers=args.num_layers,
      num_attention_heads=args.num_heads,
      max_sequence_length=MAX_POSITION_EMBEDDINGS,
      type_vocab_size=TYPE_VOCAB_SIZE,
      inner_dim=args.intermediate_size,
      inner_activation=_gelu,
      output_dropout=DROPOUT,
      attention_dropout=DROPOUT,
      initializer=model_garden_initializer())


def model_garden_pretrainer(args):
  """Model Garden BertPretrainerV2 and a Dense(2) next-sentence head.

  Returns:
    (model, next_sentence_head, model_inputs, loss_fn): model_inputs maps a
    batch in the original's feature names to Model Garden's; loss_fn(batch,
    training) is the original's total loss in TensorFlow ops.
  """
  encoder = model_garden_encoder(args)
  model = mg_models.BertPretrainerV2(
      encoder, mlm_activation=_gelu,
      mlm_initializer=model_garden_initializer())
  next_sentence_head = tf_keras.layers.Dense(
      2, kernel_initializer=model_garden_initializer(), name="next_sentence")
  next_sentence_head.build((None, args.hidden_size))

  def model_inputs(batch):
    return {**model_garden_inputs(batch),
            "masked_lm_positions": batch["masked_lm_positions"]}

  def loss_fn(batch, training):
    outputs = model(model_inputs(batch), training=training)
    weights = tf.cast(batch["masked_lm_weights"], tf.float32)
    mlm_nll = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=batch["masked_lm_ids"],
        logits=tf.cast(outputs["mlm_logits"], tf.float32))
    mlm_loss = tf.reduce_sum(weights * mlm_nll) / (
        tf.reduce_sum(weights) + 1e-5)
    nsp_logits = next_sentence_head(outputs["pooled_output"])
    nsp_loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.reshape(batch["next_sentence_labels"], [-1]),
        logits=tf.cast(nsp_logits, tf.float32)))
    return mlm_loss + nsp_loss

  return model, next_sentence_head, model_inputs, loss_fn


@contextlib.contextmanager
def model_garden_dtype_policy(dtype):
  """tf_keras layers created inside compute in `dtype` (Model Garden's
  layers read tf_keras's global policy when they are created)."""
  previous = tf_keras.mixed_precision.global_policy()
  tf_keras.mixed_precision.set_global_policy(precision.POLICIES[dtype])
  try:
    yield
  finally:
    tf_keras.mixed_precision.set_global_policy(previous)


def build_model_garden_step(args, batch, dtype):
  """Model Garden BertPretrainerV2 in `dtype` + tf_keras Adam:
  (step_fn, num_params)."""
  with model_garden_dtype_policy(dtype):
    model, next_sentence_head, model_inputs, loss_fn = \
        model_garden_pretrainer(args)
    # The masked-LM head only creates its layers on the first call.
    model(model_inputs(batch))
  optimizer = tf_keras.optimizers.Adam(LEARNING_RATE)
  variables = model.trainable_variables + next_sentence_head.trainable_variables

  @tf.function(jit_compile=args.jit_compile)
  def step(batch):
    with tf.GradientTape() as tape:
      loss = loss_fn(batch, training=True)
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
    return loss

  return step, count_params(variables)


def summarise(step_ms, batch_size):
  mean_ms = statistics.mean(step_ms)
  return {
      "mean_ms": mean_ms,
      "median_ms": statistics.median(step_ms),
      "examples_per_sec": 1000 * batch_size / mean_ms,
  }


BUILDERS = {"bert_tf": build_bert_tf_step,
            "model_garden": build_model_garden_step}


def routes(args):
  """(stack, dtype) of every route: each stack in each of --dtypes."""
  return [(stack, dtype) for dtype in args.dtypes for stack in BUILDERS]


def route_name(route):
  return " ".join(route)


def comparisons(dtypes):
  """(route, reference) pairs whose speed-up is printed: bert_tf against
  Model Garden in each dtype, then each stack in bfloat16 against itself
  in float32."""
  pairs = [(("bert_tf", dtype), ("model_garden", dtype)) for dtype in dtypes]
  if set(DTYPES) <= set(dtypes):
    pairs += [((stack, "bfloat16"), (stack, "float32")) for stack in BUILDERS]
  return pairs


def speed_ups(times, dtypes):
  """{"ROUTE over REFERENCE": the reference's time over the route's} of
  comparisons(dtypes), for times {route: time} (above 1: the route is
  faster)."""
  return {f"{route_name(route)} over {route_name(reference)}":
          times[reference] / times[route]
          for route, reference in comparisons(dtypes)}


def run_worker(args):
  """--worker=STACK --worker_dtype=DTYPE: builds that route's step and warms
  it up, reports it as a line of JSON, then runs one step for each line
  read on stdin and answers its milliseconds."""
  keras.utils.set_random_seed(SEED)  # Python, NumPy and TensorFlow seeds.
  batch = {name: tf.constant(value) for name, value in make_batch(args).items()}
  step, num_params = BUILDERS[args.worker](args, batch, args.worker_dtype)
  start = time.perf_counter()
  first_loss = float(step(batch))
  first_step_s = time.perf_counter() - start
  for _ in range(args.warmup_steps - 1):
    float(step(batch))
  print(json.dumps({"num_params": num_params, "first_loss": first_loss,
                    "first_step_s": first_step_s}), flush=True)
  for _ in sys.stdin:
    start = time.perf_counter()
    float(step(batch))
    print(1000 * (time.perf_counter() - start), flush=True)


def start_worker(args, route):
  """A process of this script timing one route (run_worker), once it is
  ready, with what it reported."""
  stack, dtype = route
  worker = subprocess.Popen(
      [sys.executable, os.path.abspath(__file__), *sys.argv[1:],
       f"--worker={stack}", f"--worker_dtype={dtype}"],
      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
  report = json.loads(worker.stdout.readline())
  print(f"{route_name(route)}: {report['num_params']:,} parameters, first "
        f"step (trace{' + XLA compile' if args.jit_compile else ''}) "
        f"{report['first_step_s']:.1f} s, loss {report['first_loss']:.4f}",
        flush=True)
  return worker, {**report, "step_ms": []}


def timed_steps(args):
  """{route: report with step_ms}: each route in a process of its own (no
  route's memory, caches and thread pools disturb another's), one step at
  a time: the timed steps go round the routes, each round starting at the
  next one, so that the machine's drift hits all alike."""
  workers, results = {}, {}
  for route in routes(args):
    workers[route], results[route] = start_worker(args, route)
  names = list(workers)
  for round_index in range(args.steps):
    first = round_index % len(names)
    for route in names[first:] + names[:first]:
      workers[route].stdin.write("step\n")
      workers[route].stdin.flush()
      results[route]["step_ms"].append(float(
          workers[route].stdout.readline()))
  for worker in workers.values():
    worker.stdin.close()
    worker.wait()
  for result in results.values():
    result.update(summarise(result["step_ms"], args.batch_size))
  return results


def main():
  args = parse_args()
  if args.worker:
    run_worker(args)
    return
  described = machine.describe()
  print("\n".join(described), flush=True)
  results = timed_steps(args)
  ratios = {statistic: speed_ups(
      {route: result[f"{statistic}_ms"] for route, result in results.items()},
      args.dtypes) for statistic in ("median", "mean")}

  device = "GPU" if tf.config.list_physical_devices("GPU") else "CPU"
  print(f"\nPretraining train step (fwd + bwd + Adam) on {device}, "
        f"jit_compile={args.jit_compile}, {args.steps} timed steps each")
  print(f"config: layers={args.num_layers} hidden={args.hidden_size} "
        f"heads={args.num_heads} intermediate={args.intermediate_size} "
        f"vocab={args.vocab_size} seq={args.seq_length} "
        f"batch={args.batch_size} predictions={args.num_predictions}")
  print(f"{'route':<22} {'mean ms':>9} {'median ms':>10} {'examples/s':>11}")
  for route, result in results.items():
    print(f"{route_name(route):<22} {result['mean_ms']:>9.1f} "
          f"{result['median_ms']:>10.1f} {result['examples_per_sec']:>11.1f}")
  print("\nspeed-ups (the reference's step time over the route's; above 1: "
        "the route is faster)")
  for name, median in ratios["median"].items():
    print(f"{name:<48} {median:.3f} (median), {ratios['mean'][name]:.3f} "
          "(mean)")

  if args.output_json:
    report = {
        "config": {name: value for name, value in vars(args).items()
                   if name != "output_json"},
        "device": device,
        "machine": described,
        "versions": {"tensorflow": tf.__version__,
                     "keras": keras.__version__,
                     "tf_keras": tf_keras.__version__},
        "results": {route_name(route): result
                    for route, result in results.items()},
        "speed_ups": ratios,
    }
    with open(args.output_json, "w") as writer:
      json.dump(report, writer, indent=2)
    print(f"wrote {args.output_json}")


if __name__ == "__main__":
  main()
