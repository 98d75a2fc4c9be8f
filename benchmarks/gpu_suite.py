"""The GPU suite: bert_tf against TF Model Garden on one GPU, in one run.

What it measures, in bfloat16 mixed precision with XLA on one device, both
stacks built with the same BERT shapes and fed the same synthetic data:

  pretraining  BERT-Base (L=12, H=768, A=12, I=3072) and BERT-Large (L=24,
               H=1024, A=16, I=4096), vocab 30522, seq 128, 20 masked
               predictions, batch 256: training examples/sec of
               benchmarks/pretraining.py's two loops (bert_tf's Trainer;
               Model Garden's BertPretrainerV2 with its "adamw"), reading the
               same TFRecords. BERT-Large's bert_tf figure is also divided by
               a published anchor, NVIDIA's TF2 BERT-Large phase 1 on one
               A100 (486 seq/s), which this run does not measure; an H200
               should reach about twice it.
  squad        BERT-Base at seq 384, batch 32: training examples/sec of
               bert_tf's BertSpanLabeler trained by its Trainer with
               SpanObjective, and of Model Garden's BertSpanLabeler on its
               BertEncoder trained with its "adamw" on the same span loss,
               both on one batch of random ids and answer spans.
  prediction   a BERT-Base classifier (each stack's BertClassifier) at seq
               128, inference only: the median latency of a batch of 1 over
               200 calls, and the examples/sec of 100 batches of 64.

Each measurement builds both stacks, calls each once untimed (tracing and
XLA compilation), then alternates timed calls between them, swapping which
goes first every round, so that noise hits both alike.

Run from the repository root (a few minutes on one H200; --sections runs a
subset):

  .venv/bin/python benchmarks/gpu_suite.py \\
      [--sections=pretraining,squad,prediction] > gpu_suite.json

Smoke run: the same code paths, bfloat16 and XLA included, with tiny
shapes, on whatever device there is (about 40 s on 2 CPU cores), so that a
GPU run does not find a fault in them the first time it runs:

  .venv/bin/python benchmarks/gpu_suite.py --smoke

Printed on stdout: one JSON object (logs go to stderr) with device,
tensorflow, keras, tf_keras, dtype, xla, smoke and wall_s, and per section
run its wall_s and its measurements (pretraining: bert_base, bert_large;
squad: bert_base; prediction: latency, throughput). A measurement holds its
config (the model's sizes, seq_length, batch_size, and loop_steps batches
per call x rounds timed calls), its wall_s, and unit, bert_tf, model_garden
and ratio, which is above 1 when bert_tf is faster: bert_tf / model_garden
for examples/sec, model_garden / bert_tf for ms. pretraining.bert_large.anchor
holds the published figure, its source, measured_in_this_run (false) and
bert_tf_ratio, the measured bert_tf figure over it.
"""

import argparse
import contextlib
import json
import os
import platform
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# pylint: disable=g-import-not-at-top,wrong-import-position
import pretraining  # first: it quiets TensorFlow's and Model Garden's logs
import pretrainer_step
import keras
import numpy as np
import tensorflow as tf
import tf_keras
from official.nlp.modeling import models as mg_models
from bert_tf.models.classifier import BertClassifier
from bert_tf.models.span_labeler import BertSpanLabeler
from bert_tf.objectives.spans import SpanObjective
from bert_tf.optimization import precision
# pylint: enable=g-import-not-at-top,wrong-import-position

SECTIONS = ("pretraining", "squad", "prediction")
EXAMPLES_PER_SEC = "examples/sec"
MILLISECONDS = "ms"
NUM_LABELS = 2

BERT_BASE = {"num_layers": 12, "hidden_size": 768, "num_heads": 12,
             "intermediate_size": 3072}
BERT_LARGE = {"num_layers": 24, "hidden_size": 1024, "num_heads": 16,
              "intermediate_size": 4096}
# --smoke: every measurement at this size, with at most SMOKE_BATCH_SIZE
# examples a batch and SMOKE_STEPS batches a call and timed calls.
SMOKE_SHAPES = {"num_layers": 1, "hidden_size": 32, "num_heads": 2,
                "intermediate_size": 37, "vocab_size": 99, "seq_length": 16,
                "num_predictions": 3}
SMOKE_BATCH_SIZE = 4
SMOKE_STEPS = 2

NVIDIA_A100_ANCHOR = {
    "examples_per_sec": 485.59,
    "measured_in_this_run": False,
    "source": (
        "published, not measured in this run: NVIDIA DeepLearningExamples, "
        "TensorFlow2/LanguageModeling/BERT README, 'Pre-training training "
        "performance: Single-node on NVIDIA DGX A100 (8x A100 80GB)', 1 GPU, "
        "BERT-Large phase 1 (seq 128), mixed precision (fp16 AMP) with XLA, "
        "LAMB, batch 312 per GPU with 256 accumulation steps (one optimizer "
        "update per 256 batches; this run updates every batch), TensorFlow "
        "21.02 NGC container"),
}


def parse_args():
  parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
  parser.add_argument("--sections", default=",".join(SECTIONS),
                      help=f"comma-separated subset of {','.join(SECTIONS)}")
  parser.add_argument("--smoke", action="store_true",
                      help="tiny shapes: checks the code paths, bfloat16 "
                           "and XLA included, in under a minute on a CPU; "
                           "measures nothing useful")
  args = parser.parse_args()
  unknown = set(args.sections.split(",")) - set(SECTIONS)
  if unknown:
    parser.error(f"--sections: unknown {', '.join(sorted(unknown))}; "
                 f"expected a subset of {','.join(SECTIONS)}")
  return args


def measurement(model, seq_length, batch_size, loop_steps, rounds):
  """One measurement's shapes and steps, in pretraining.py's flag names."""
  return argparse.Namespace(
      **model, vocab_size=30522, seq_length=seq_length, num_predictions=20,
      batch_size=batch_size, loop_steps=loop_steps, rounds=rounds)


def smoke_size(args):
  """The same measurement with a tiny model, batches and step counts."""
  return argparse.Namespace(**{
      **vars(args), **SMOKE_SHAPES,
      "batch_size": min(args.batch_size, SMOKE_BATCH_SIZE),
      "loop_steps": min(args.loop_steps, SMOKE_STEPS),
      "rounds": min(args.rounds, SMOKE_STEPS)})


def measure_pretraining(args, dtype, use_xla):
  """benchmarks/pretraining.py's comparison on records of random examples."""
  with tempfile.TemporaryDirectory() as data_dir:
    path = os.path.join(data_dir, "examples.tfrecord")
    pretraining.write_records(args, path)
    return EXAMPLES_PER_SEC, pretraining.measure(args, path, dtype, use_xla)


def span_batch(args):
  """A batch of random ids (pretrainer_step.make_batch's, with padding and
  two segments) and random answer spans inside each sequence."""
  batch = pretrainer_step.make_batch(args)
  rng = np.random.default_rng(pretrainer_step.SEED)
  lengths = batch["input_mask"].sum(axis=1)
  start_positions = rng.integers(0, lengths)
  return {**batch,
          "start_positions": start_positions.astype(np.int32),
          "end_positions": rng.integers(start_positions, lengths).astype(
              np.int32),
          "is_real_example": np.ones(args.batch_size, np.int32)}


def measure_squad(args, dtype, use_xla):
  """SQuAD fine-tuning examples/sec of both span labelers."""
  dataset = tf.data.Dataset.from_tensors(span_batch(args)).repeat()
  with pretrainer_step.model_garden_dtype_policy(dtype):
    model = mg_models.BertSpanLabeler(
        pretrainer_step.model_garden_encoder(args),
        initializer=pretrainer_step.model_garden_initializer())

  def span_loss(batch, training):
    """SpanObjective's loss: the mean of (start + end cross-entropy) / 2."""
    logits = dict(zip(("start", "end"),
                      model(pretrainer_step.model_garden_inputs(batch),
                            training=training)))
    return tf.reduce_mean(tf.add_n([
        tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=batch[f"{name}_positions"],
            logits=tf.cast(logits[name], tf.float32))
        for name in logits]) / 2.0)

  with tempfile.TemporaryDirectory() as output_dir:
    runners = {
        "bert_tf": pretraining.bert_tf_runner(
            args, lambda: BertSpanLabeler(pretrainer_step.bert_tf_config(args)),
            SpanObjective(), dataset, dtype, use_xla, output_dir),
        "model_garden": pretraining.model_garden_loop(
            args, span_loss, model.trainable_variables, iter(dataset),
            use_xla)}
    return EXAMPLES_PER_SEC, pretraining.examples_per_sec(args, runners,
                                                          use_xla)


def classifier_runners(args, dtype, use_xla):
  """Both BERT classifiers in inference: {name: a function that predicts
  one batch of batch_size and syncs}."""
  with precision.dtype_policy(dtype):
    ours = BertClassifier(pretrainer_step.bert_tf_config(args), NUM_LABELS)
  with pretrainer_step.model_garden_dtype_policy(dtype):
    theirs = mg_models.BertClassifier(
        pretrainer_step.model_garden_encoder(args), NUM_LABELS,
        initializer=pretrainer_step.model_garden_initializer())
  logits_of = {
      "bert_tf": lambda batch: ours(batch, training=False)["logits"],
      "model_garden": lambda batch: theirs(
          pretrainer_step.model_garden_inputs(batch), training=False)}
  batch = {name: tf.constant(value)
           for name, value in pretrainer_step.make_batch(args).items()}

  def runner(logits):
    # Fetching the sum of the logits waits for every example's.
    predict = tf.function(
        lambda batch: tf.reduce_sum(tf.cast(logits(batch), tf.float32)),
        jit_compile=use_xla)
    return lambda: float(predict(batch))

  return {name: runner(logits) for name, logits in logits_of.items()}


def measure_latency(args, dtype, use_xla):
  """The median ms of a prediction call."""
  seconds = pretraining.time_alternately(
      classifier_runners(args, dtype, use_xla), args.rounds, use_xla)
  return MILLISECONDS, {name: 1000 * statistics.median(values)
                        for name, values in seconds.items()}


def measure_throughput(args, dtype, use_xla):
  """Prediction examples/sec."""
  return EXAMPLES_PER_SEC, pretraining.examples_per_sec(
      args, classifier_runners(args, dtype, use_xla), use_xla)


# (section, measurement, how it is measured, its full size, an anchor).
MEASUREMENTS = (
    ("pretraining", "bert_base", measure_pretraining,
     measurement(BERT_BASE, 128, 256, loop_steps=10, rounds=3), None),
    ("pretraining", "bert_large", measure_pretraining,
     measurement(BERT_LARGE, 128, 256, loop_steps=10, rounds=3),
     NVIDIA_A100_ANCHOR),
    ("squad", "bert_base", measure_squad,
     measurement(BERT_BASE, 384, 32, loop_steps=10, rounds=3), None),
    ("prediction", "latency", measure_latency,
     measurement(BERT_BASE, 128, 1, loop_steps=1, rounds=200), None),
    ("prediction", "throughput", measure_throughput,
     measurement(BERT_BASE, 128, 64, loop_steps=1, rounds=100), None),
)


def comparison(unit, figures):
  """Both figures and their ratio, above 1 when bert_tf is faster."""
  ours, theirs = figures["bert_tf"], figures["model_garden"]
  return {"unit": unit, "bert_tf": ours, "model_garden": theirs,
          "ratio": ours / theirs if unit == EXAMPLES_PER_SEC
                   else theirs / ours}


def device_name():
  gpus = tf.config.list_physical_devices("GPU")
  if gpus:
    return tf.config.experimental.get_device_details(gpus[0]).get(
        "device_name", gpus[0].name)
  return f"CPU ({platform.machine()}, {os.cpu_count()} cores)"


def main():
  flags = parse_args()
  sections = flags.sections.split(",")
  dtype, use_xla = "bfloat16", True  # --smoke too: the same code paths
  keras.utils.set_random_seed(pretrainer_step.SEED)
  start = time.perf_counter()
  report = {"device": device_name(), "tensorflow": tf.__version__,
            "keras": keras.__version__, "tf_keras": tf_keras.__version__,
            "dtype": dtype, "xla": use_xla, "smoke": flags.smoke}
  # Everything printed on the way is a log; stdout carries the JSON alone.
  with contextlib.redirect_stdout(sys.stderr):
    for section, name, measure, args, anchor in MEASUREMENTS:
      if section not in sections:
        continue
      if flags.smoke:
        args = smoke_size(args)
      print(f"{section} {name}: {vars(args)}", flush=True)
      measurement_start = time.perf_counter()
      result = {"config": vars(args),
                **comparison(*measure(args, dtype, use_xla))}
      if anchor:
        result["anchor"] = {**anchor, "bert_tf_ratio": (
            result["bert_tf"] / anchor["examples_per_sec"])}
      result["wall_s"] = time.perf_counter() - measurement_start
      print(f"  {result['unit']}: bert_tf {result['bert_tf']:.2f}, "
            f"model_garden {result['model_garden']:.2f}, ratio "
            f"{result['ratio']:.3f}, {result['wall_s']:.0f} s", flush=True)
      report.setdefault(section, {"wall_s": 0.0})[name] = result
      report[section]["wall_s"] += result["wall_s"]
  report["wall_s"] = time.perf_counter() - start
  print(json.dumps(report, indent=2))


if __name__ == "__main__":
  main()
