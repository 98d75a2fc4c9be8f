"""Quantized and exported BERT against the float model, on real SST-2.

What it measures: a small BERT (random init, --num_layers/--hidden_size...,
the uncased vocabulary of ../shared/vocab) fine-tuned with Keras' fit on
raw sentences of SST-2's train.tsv (--train_examples of them, through
BertPreprocessor), then, on all 872 sentences of SST-2's dev.tsv, for each
form of the model:

  keras fp32        the fine-tuned model (the reference)
  keras int8/int4/float8  model.quantize(mode) of a copy
  litert fp32       model.export(format="litert")
  litert int8       the same with the converter's dynamic-range int8
                    (optimizations=[tf.lite.Optimize.DEFAULT])
  onnx fp32/int8    model.export(format="onnx") of the float model and of
                    the Keras int8 copy, run by onnxruntime

the agreement of its predicted labels with the float model's, the largest
difference of a class probability, dev accuracy, the file size (.keras,
.tflite, .onnx) and CPU latency: the median of --latency_runs single-sentence
calls and the time of the whole dev set in batches of --batch_size (ids
in, so the tokenizer is not timed). Each form is timed in this one process,
one after the other.

  litert tf.Module  TFLiteConverter.from_saved_model on the ids signature of
                    run_classifier's TF Serving export (a tf.Module holding
                    the model)

It also times quantize("int8") of a BERT-base-shaped classifier, bert_tf's
against Keras' own Model.quantize (which collects garbage once per Dense
layer) in this process, after the fine-tuning has filled its heap.

It prints the CPU cores it may use and the CPU's int8 and bfloat16 matrix
features (/proc/cpuinfo's avx512_vnni, avx512_bf16, amx_int8, amx_bf16),
on which the speed of Keras' int8 and of oneDNN's kernels depends.

Run from the repository root (about 5 minutes on 2 CPU cores):

  .venv/bin/python benchmarks/quantization.py [--output_json=PATH]
"""

import json
import os
import statistics
import sys
import tempfile
import time

import keras
import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import pretrainer_step  # pylint: disable=g-import-not-at-top
import machine
import bert_tf  # pylint: disable=g-import-not-at-top
from bert_tf import tokenization  # pylint: disable=g-import-not-at-top
from bert_tf.tasks.glue import examples as glue  # pylint: disable=g-import-not-at-top
from bert_tf.tasks.glue import serving as glue_serving  # pylint: disable=g-import-not-at-top

SHARED = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))), "..", "shared")
VOCAB = os.path.join(SHARED, "vocab", "bert-base-uncased-vocab.txt")
SST2 = os.path.join(SHARED, "data", "glue", "SST-2")
CPU_FEATURES = ("avx512_vnni", "avx512_bf16", "amx_int8", "amx_bf16")


def parse_args():
  parser = pretrainer_step.model_argument_parser(__doc__.split("\n", 1)[0])
  parser.set_defaults(hidden_size=128, num_heads=2, intermediate_size=512,
                      seq_length=64)
  parser.add_argument("--train_examples", type=int, default=12000)
  parser.add_argument("--epochs", type=int, default=2)
  parser.add_argument("--latency_runs", type=int, default=30)
  parser.add_argument("--output_json", default=None)
  args = parser.parse_args()
  if args.vocab_size != len(tokenization.load_vocab(VOCAB)):
    parser.error(f"--vocab_size={args.vocab_size}: {VOCAB} has "
                 f"{len(tokenization.load_vocab(VOCAB))} tokens")
  return args


def cpu_features():
  """{feature: whether /proc/cpuinfo lists it} for CPU_FEATURES (all
  False where there is no /proc/cpuinfo)."""
  flags = set()
  try:
    with open("/proc/cpuinfo") as reader:
      for line in reader:
        if line.startswith("flags"):
          flags = set(line.split(":", 1)[1].split())
          break
  except OSError:
    pass
  return {feature: feature in flags for feature in CPU_FEATURES}


def fine_tuned(args):
  """A raw-text classifier fitted on SST-2's first train_examples."""
  keras.utils.set_random_seed(0)
  model = bert_tf.BertClassifier(
      pretrainer_step.bert_tf_config(args), 2,
      preprocessor=bert_tf.BertPreprocessor(VOCAB, True, args.seq_length))
  task = glue.get_task("sst-2")
  train = glue.read_examples(task, SST2, "train")[:args.train_examples]
  steps = args.epochs * len(train) // args.batch_size
  model.compile(optimizer=bert_tf.create_optimizer(5e-4, steps, steps // 10),
                loss=keras.losses.SparseCategoricalCrossentropy(
                    from_logits=True),
                metrics=["sparse_categorical_accuracy"])
  started = time.perf_counter()
  model.fit([example.text_a for example in train],
            np.array([int(example.label) for example in train]),
            batch_size=args.batch_size, epochs=args.epochs, verbose=2)
  print(f"fine-tuned in {time.perf_counter() - started:.0f} s")
  return model


def ids_copy(model, mode=None):
  """The classifier without its preprocessor, quantized to `mode`."""
  copy = bert_tf.BertClassifier(model.config, model.num_labels)
  copy.set_weights(model.get_weights())
  if mode:
    copy.quantize(mode)
    dense = [layer for layer in copy._flatten_layers()
             if isinstance(layer, keras.layers.Dense)]
    quantized = sum(layer.quantization_mode == mode for layer in dense)
    print(f"{mode}: {quantized} of {len(dense)} Dense layers quantized")
  return copy


def timed(predict, inputs, latency_runs, batch_size):
  """(single-sentence latency ms, whole-set seconds, probabilities)."""
  single = {name: value[:1] for name, value in inputs.items()}
  predict(single)
  latencies = []
  for _ in range(latency_runs):
    started = time.perf_counter()
    predict(single)
    latencies.append((time.perf_counter() - started) * 1000)
  started = time.perf_counter()
  probabilities = np.concatenate([
      predict({name: value[start:start + batch_size]
               for name, value in inputs.items()})
      for start in range(0, len(inputs["input_ids"]), batch_size)])
  return statistics.median(latencies), time.perf_counter() - started, \
      probabilities


def keras_form(model, directory, name):
  path = os.path.join(directory, f"{name}.keras")
  model.save(path)
  forward = tf.function(lambda inputs: model(inputs)["probabilities"])
  return path, lambda inputs: forward(inputs).numpy()


def litert_form(model, directory, name, **converter):
  from ai_edge_litert import interpreter  # pylint: disable=g-import-not-at-top
  path = os.path.join(directory, f"{name}.tflite")
  model.export(path, format="litert", verbose=False, **converter)
  runner = interpreter.Interpreter(model_path=path).get_signature_runner()
  return path, lambda inputs: runner(**inputs)["probabilities"]


def onnx_form(model, directory, name):
  import onnxruntime  # pylint: disable=g-import-not-at-top
  path = os.path.join(directory, f"{name}.onnx")
  model.export(path, format="onnx", verbose=False)
  session = onnxruntime.InferenceSession(path)
  index = [item.name for item in session.get_outputs()].index("probabilities")
  return path, lambda inputs: session.run(None, inputs)[index]


def tf_module_litert_form(model, directory):
  """run_classifier's ids export (a tf.Module) through from_saved_model."""
  from ai_edge_litert import interpreter  # pylint: disable=g-import-not-at-top
  serving, signatures = glue_serving.classifier_serving(ids_copy(model), None,
                                                        None)
  saved = os.path.join(directory, "tf_module")
  tf.saved_model.save(serving, saved, signatures=signatures)
  converter = tf.lite.TFLiteConverter.from_saved_model(
      saved, signature_keys=["serving_default"])
  path = os.path.join(directory, "tf_module.tflite")
  with open(path, "wb") as writer:
    writer.write(converter.convert())
  runner = interpreter.Interpreter(model_path=path).get_signature_runner(
      "serving_default")
  return path, lambda inputs: runner(**inputs)["probabilities"]


def quantize_seconds():
  """{"bert_tf": s, "keras": s}: quantize("int8") of a BERT-base-shaped
  classifier by bert_tf and by Keras' own Model.quantize, each on a new
  model."""
  config = bert_tf.BertConfig(vocab_size=30522, hidden_size=768,
                              num_hidden_layers=12, num_attention_heads=12,
                              intermediate_size=3072)
  routes = {"keras": lambda model: keras.Model.quantize(
      model, "int8", filters=lambda layer: isinstance(
          layer, keras.layers.Dense)),
            "bert_tf": lambda model: model.quantize("int8")}
  seconds = {}
  for name, quantize in routes.items():
    model = bert_tf.BertClassifier(config, 2)
    model({name: np.zeros((1, 8), np.int32) for name in
           ("input_ids", "input_mask", "segment_ids")})
    start = time.perf_counter()
    quantize(model)
    seconds[name] = time.perf_counter() - start
  return seconds


def main():
  args = parse_args()
  print(machine.described_in_child(), flush=True)
  cores = len(os.sched_getaffinity(0))
  features = cpu_features()
  print(f"CPU: {cores} cores; " + ", ".join(
      f"{name} {'yes' if held else 'no'}" for name, held in features.items()))
  model = fine_tuned(args)
  task = glue.get_task("sst-2")
  dev = glue.read_examples(task, SST2, "dev")
  labels = np.array([int(example.label) for example in dev])
  inputs = {name: value.numpy() for name, value in model.preprocessor(
      tf.constant([example.text_a for example in dev])).items()}
  results = {}
  with tempfile.TemporaryDirectory() as directory:
    forms = {
        "keras fp32": lambda: keras_form(ids_copy(model), directory, "fp32"),
        "keras int8": lambda: keras_form(ids_copy(model, "int8"), directory,
                                         "int8"),
        "keras float8": lambda: keras_form(ids_copy(model, "float8"),
                                           directory, "float8"),
        "keras int4": lambda: keras_form(ids_copy(model, "int4"), directory,
                                         "int4"),
        "litert fp32": lambda: litert_form(ids_copy(model), directory, "fp32"),
        "litert int8": lambda: litert_form(
            ids_copy(model), directory, "int8",
            optimizations=[tf.lite.Optimize.DEFAULT]),
        "onnx fp32": lambda: onnx_form(ids_copy(model), directory, "fp32"),
        "onnx int8": lambda: onnx_form(ids_copy(model, "int8"), directory,
                                       "int8"),
        "litert tf.Module": lambda: tf_module_litert_form(model, directory),
    }
    reference = None
    for name, make in forms.items():
      path, predict = make()
      latency, total, probabilities = timed(predict, inputs,
                                            args.latency_runs, args.batch_size)
      if reference is None:
        reference = probabilities
      results[name] = {
          "agreement": float(np.mean(probabilities.argmax(-1)
                                     == reference.argmax(-1))),
          "max_probability_difference": float(
              np.abs(probabilities - reference).max()),
          "accuracy": float(np.mean(probabilities.argmax(-1) == labels)),
          "size_mb": os.path.getsize(path) / 1e6,
          "latency_ms": latency,
          "dev_set_s": total,
      }
  print(f"{'form':16} {'agree':>7} {'max dp':>8} {'acc':>6} {'MB':>6} "
        f"{'ms/1':>7} {'dev s':>6}")
  for name, row in results.items():
    print(f"{name:16} {row['agreement']:7.4f} "
          f"{row['max_probability_difference']:8.4f} {row['accuracy']:6.3f} "
          f"{row['size_mb']:6.1f} {row['latency_ms']:7.2f} "
          f"{row['dev_set_s']:6.2f}")
  seconds = quantize_seconds()
  print(f"quantize('int8') of a BERT-base classifier: bert_tf "
        f"{seconds['bert_tf']:.2f} s, Keras' own {seconds['keras']:.2f} s "
        f"({seconds['keras'] / seconds['bert_tf']:.1f}x)")
  if args.output_json:
    with open(args.output_json, "w") as writer:
      json.dump({"config": vars(args), "cpu": {"cores": cores, **features},
                 "results": results, "quantize_seconds": seconds}, writer,
                indent=2)


if __name__ == "__main__":
  main()
