"""Converts a BERT model directory between the original format and Hugging
Face's, either way; the input's format is recognised by its files.

    python run_scripts/convert_checkpoint.py --input_dir=uncased_L-12_H-768_A-12 \\
        --output_dir=bert-base-uncased-hf --output_format=huggingface
    python run_scripts/convert_checkpoint.py --input_dir=path/to/hf-bert \\
        --output_dir=hf-bert-original --output_format=original

An original-format output is bert_config.json, bert_model.ckpt.{index,data-*}
and vocab.txt; a Hugging Face one is config.json, model.safetensors, vocab.txt
and tokenizer_config.json, for transformers' BertFor... class of the head:
pretraining (cls/predictions, cls/seq_relationship), run_classifier's,
run_squad's, run_ner's, run_swag's, or the encoder alone. A
sentence-transformers folder keeps its modules and settings in a Hugging Face
output, a cross-encoder its activation in either; an embedder's modules have no
place in an original-format output, which is refused. The output directory
must be new or empty (a symlink to one is written through): a new one appears
only when complete, an existing one is written in place (docs/checkpoints.md).
The temporary of a killed conversion is removed by the next one into that
output.
"""

import time

from absl import flags, logging

import program
from bert_tf.checkpoints import conversion, huggingface

flags.DEFINE_string("input_dir", None,
                    "The model directory: original format (bert_config.json, "
                    "vocab.txt, a checkpoint) or a Hugging Face folder.")
flags.DEFINE_string("output_dir", None,
                    "A new or empty directory to write (or a symlink to one).")
flags.DEFINE_enum("output_format", None, list(conversion.FORMATS),
                  "original: bert_config.json + bert_model.ckpt; "
                  "huggingface: config.json + model.safetensors.")
flags.DEFINE_enum(
    "architecture", None, list(huggingface.ARCHITECTURES),
    "The head to convert, where the input's names leave it open: an "
    "original checkpoint whose output_weights has one row is run_swag's "
    "(BertForMultipleChoice) unless this says BertForSequenceClassification "
    "(a regression such as STS-B). Checked against the input otherwise.")
flags.DEFINE_bool(
    "do_lower_case", None,
    "tokenizer_config.json's do_lower_case. Default: the input's "
    "tokenizer_config.json, else what its vocab.txt shows.")
flags.DEFINE_enum(
    "dtype", "keep", ["keep", *conversion.DTYPES],
    "The dtype of the written weights; keep: each tensor's own (a float16 or "
    "bfloat16 checkpoint stays half the size of a float32 one).")
FLAGS = flags.FLAGS


def main(_):
  start = time.time()
  source = conversion.convert(FLAGS.input_dir, FLAGS.output_dir,
                              FLAGS.output_format, FLAGS.architecture,
                              FLAGS.do_lower_case,
                              None if FLAGS.dtype == "keep" else FLAGS.dtype)
  logging.info("Wrote %s (%s, %s head) from %s in %.1f s", FLAGS.output_dir,
               FLAGS.output_format, source.architecture_name, FLAGS.input_dir,
               time.time() - start)


if __name__ == "__main__":
  program.run(main, required_flags=["input_dir", "output_dir",
                                    "output_format"])
