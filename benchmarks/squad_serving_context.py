"""run_squad's serve_text against the length of its context.

What it measures: run_squad's export (tasks/squad/serving.py) of a random
BertSpanLabeler, written into a temporary directory, loaded with
tf.saved_model.load (as TF Serving loads it) and asked "what colour car?"
about a context of each of --sizes thousand characters: --text=sentences,
one 51-character sentence repeated; punctuation, "!" repeated (a piece per
character: the most windows a context of its length makes); long_word, a
quarter of the characters as one-letter words, then one word of half of
them. Printed per size: the context's word pieces and windows, the median
seconds of serve_text over --repeats calls after one warm-up, and the
milliseconds per thousand characters, which stay flat while the cost is
linear in the context. With --steps, the stages in the graph too, each
timed with those before it (so each column adds one):
tokenize_with_offsets, doc_stride_windows (with the max-context flags), the
model, best_spans.

--model=tiny (the default: hidden 32, 2 layers, the demo vocabulary) shows
the graph's own steps; --model=base (BERT-Base's shapes, the official
uncased vocabulary, from ../shared) what a real model costs on this CPU.

    .venv/bin/python benchmarks/squad_serving_context.py \\
        [--sizes=6,25,51,102,204] [--model=tiny] [--text=sentences] \\
        [--steps] [--max_seq_length=48 --doc_stride=16 --max_query_length=12]
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

PROJECT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, PROJECT_DIR)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# pylint: disable=g-import-not-at-top,wrong-import-position
import tensorflow as tf
import machine

from bert_tf.config import BertConfig
from bert_tf.files import export
from bert_tf.models import BertSpanLabeler
from bert_tf.tasks.squad.serving import squad_serving
from bert_tf.text.tokenizer import InGraphTokenizer
from bert_tf.text.offsets import tokenize_with_offsets
from bert_tf.text.squad.answer_options import AnswerOptions
from bert_tf.text.squad.spans import best_spans
from bert_tf.text.squad.windows import doc_stride_windows
from bert_tf.wordpiece.rules import CLS_TOKEN, SEP_TOKEN
from create_pretraining_data import OFFICIAL_UNCASED
from tests.support.helpers import tiny_config
from tests.support.squad_fixtures import DEMO_VOCAB
# pylint: enable=g-import-not-at-top,wrong-import-position

QUESTION = "what colour car?"
SENTENCE = "The harbour was quiet; a red car stood by the door."


def parse_args():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--sizes", default="6,25,51,102,204",
                      help="context lengths, thousands of characters")
  parser.add_argument("--model", choices=["tiny", "base"], default="tiny")
  parser.add_argument("--text", default="sentences",
                      choices=["sentences", "punctuation", "long_word"])
  parser.add_argument("--max_seq_length", type=int, default=48)
  parser.add_argument("--doc_stride", type=int, default=16)
  parser.add_argument("--max_query_length", type=int, default=12)
  parser.add_argument("--repeats", type=int, default=3)
  parser.add_argument("--steps", action="store_true",
                      help="also time the stages in the graph")
  return parser.parse_args()


def model_and_tokenizer(name):
  """A random BertSpanLabeler of --model's shapes and its tokenizer."""
  if name == "tiny":
    with open(DEMO_VOCAB, encoding="utf-8") as reader:
      config = tiny_config(vocab_size=len(reader.readlines()),
                           max_position_embeddings=512)
    return BertSpanLabeler(config), InGraphTokenizer(DEMO_VOCAB, True)
  return (BertSpanLabeler(BertConfig(
      vocab_size=30522, hidden_size=768, num_hidden_layers=12,
      num_attention_heads=12, intermediate_size=3072)),
          InGraphTokenizer(OFFICIAL_UNCASED, True))


def median_seconds(call, repeats):
  """The median seconds of call() over repeats calls, after a warm-up."""
  call()
  seconds = []
  for _ in range(repeats):
    start = time.perf_counter()
    tf.nest.map_structure(lambda tensor: tensor.numpy(), call())
    seconds.append(time.perf_counter() - start)
  return statistics.median(seconds)


def stages(model, tokenizer, args, options):
  """{name: tf.function(question, context)}, each running the stages
  before it too."""
  text = tf.TensorSpec([None], tf.string)

  def windows_of(question, context):
    pieces = tokenize_with_offsets(tokenizer, context)
    return pieces, doc_stride_windows(
        tokenizer(question)[:, :args.max_query_length],
        pieces.ids.merge_dims(1, 2), args.max_seq_length, args.doc_stride,
        tokenizer.vocab[CLS_TOKEN], tokenizer.vocab[SEP_TOKEN])

  def logits_of(question, context):
    _, windows = windows_of(question, context)
    outputs = model({name: windows[name] for name in
                     ("input_ids", "input_mask", "segment_ids")},
                    training=False)
    return windows, outputs

  def tokenize(question, context):
    del question
    return tokenize_with_offsets(tokenizer, context).ids.flat_values

  def windows(question, context):
    return windows_of(question, context)[1]

  def model_logits(question, context):
    return logits_of(question, context)[1]

  def spans(question, context):
    windows, outputs = logits_of(question, context)
    return best_spans(outputs["start_logits"], outputs["end_logits"],
                      windows, options, tf.size(context, tf.int64))

  return {name: tf.function(function, input_signature=[text] * 2)
          for name, function in (("tokenize", tokenize),
                                 ("+windows", windows),
                                 ("+model", model_logits),
                                 ("+spans", spans))}


def main():
  args = parse_args()
  print(machine.described_in_child(), flush=True)
  sizes = [int(size) for size in args.sizes.split(",")]
  model, tokenizer = model_and_tokenizer(args.model)
  options = AnswerOptions()
  contexts = [{
      "sentences": " ".join([SENTENCE] * (size * 250 // 13)),
      "punctuation": "!" * (size * 1000),
      "long_word": "a " * (size * 250) + "b" * (size * 500),
  }[args.text] for size in sizes]
  # A limit that answers every size.
  serving, signatures = squad_serving(
      model, tokenizer, args.max_seq_length, args.doc_stride,
      args.max_query_length, options, max(map(len, contexts)))
  with tempfile.TemporaryDirectory() as directory:
    serve_text = tf.saved_model.load(export.write_saved_model(
        serving, directory, signatures)).signatures["serve_text"]
    functions = stages(model, tokenizer, args, options)
    timed = functions if args.steps else {}
    print(f"--model={args.model}, --text={args.text}, max_seq_length "
          f"{args.max_seq_length}, doc_stride {args.doc_stride}; median of "
          f"{args.repeats} calls")
    print(f"{'chars':>7} {'pieces':>7} {'windows':>7} "
          + "".join(f"{name:>9}" for name in timed)
          + f" {'serve_text':>10} {'ms/1000':>8}")
    question = tf.constant([QUESTION])
    for text in contexts:
      context = tf.constant([text])
      counts = (int(tf.size(functions["tokenize"](question, context))),
                int(tf.size(functions["+windows"](
                    question, context)["example_index"])))
      seconds = [median_seconds(lambda function=function: function(
          question, context), args.repeats) for function in timed.values()]
      total = median_seconds(lambda: serve_text(question=question,
                                                context=context),
                             args.repeats)
      print(f"{len(text):>7} {counts[0]:>7} {counts[1]:>7} "
            + "".join(f"{value:>9.3f}" for value in seconds)
            + f" {total:>10.3f} {total / len(text) * 1e6:>8.2f}",
            flush=True)


if __name__ == "__main__":
  main()
