"""The embedded default job: a tiny BERT, end to end on one sentence.

Tokenises a sentence with the project's own vocabulary (vocab/, learned from
Python's docstrings), runs a randomly initialised tiny BertPretrainer on it
with one masked token, saves the model as a release-format directory
(bert_config.json, vocab.txt, bert_model.ckpt), reopens that directory with
bert_tf.load_pretrained and checks the outputs agree.

    python run_scripts/demo.py --output_dir=demo_output
"""

import os
import shutil

import numpy as np
from absl import app, flags, logging

import bert_tf
from bert_tf import tokenization, vocabulary

flags.DEFINE_string("output_dir", "demo_output",
                    "Where the vocabulary, config and checkpoint are written.")
flags.DEFINE_string(
    "sentence", "Return a new list containing all items from the iterable.",
    "Text to run the model on.")
FLAGS = flags.FLAGS


def encode(tokenizer, sentence, mask_index):
  """[CLS] tokens [SEP] as model inputs, with token `mask_index` masked."""
  tokens = ["[CLS]"] + tokenizer.tokenize(sentence) + ["[SEP]"]
  original = tokens[mask_index]
  tokens[mask_index] = "[MASK]"
  ids = np.array([tokenizer.convert_tokens_to_ids(tokens)], np.int32)
  return tokens, original, {
      "input_ids": ids,
      "input_mask": np.ones_like(ids),
      "segment_ids": np.zeros_like(ids),
      "masked_lm_positions": np.array([[mask_index]], np.int32),
  }


def main(_):
  os.makedirs(FLAGS.output_dir, exist_ok=True)
  vocab_file = os.path.join(FLAGS.output_dir, "vocab.txt")
  shutil.copyfile(vocabulary.demo_vocab_file(), vocab_file)
  tokenizer = tokenization.FullTokenizer(vocab_file, do_lower_case=True)
  vocab_size = len(tokenizer.vocab)
  config = bert_tf.BertConfig(vocab_size=vocab_size, hidden_size=32,
                              num_hidden_layers=2, num_attention_heads=4,
                              intermediate_size=64, max_position_embeddings=64,
                              type_vocab_size=2)
  config.to_json_file(os.path.join(FLAGS.output_dir, "bert_config.json"))
  tokens, masked_word, inputs = encode(tokenizer, FLAGS.sentence, 3)
  print(f"vocabulary: {vocab_size} tokens, copied from vocab/ to {vocab_file}")
  print(f"tokens: {tokens}  (masked: {masked_word!r})")

  model = bert_tf.BertPretrainer(config)
  outputs = model(inputs, training=False)
  for name in ("embedding_output", "sequence_output", "pooled_output",
               "masked_lm_log_probs", "next_sentence_log_probs"):
    print(f"{name}: shape {tuple(outputs[name].shape)}")
  print(f"all_encoder_layers: {len(outputs['all_encoder_layers'])} x "
        f"{tuple(outputs['all_encoder_layers'][0].shape)}")
  best = np.argsort(-outputs["masked_lm_log_probs"][0, 0])[:3]
  print("untrained guesses for the masked token:",
        tokenizer.convert_ids_to_tokens(best.tolist()))
  is_next, is_random = np.exp(outputs["next_sentence_log_probs"][0])
  print(f"next-sentence probabilities: IsNext {is_next:.3f}, "
        f"random {is_random:.3f}")

  checkpoint = bert_tf.save_checkpoint(
      model, os.path.join(FLAGS.output_dir, "bert_model.ckpt"))
  pretrained = bert_tf.load_pretrained(FLAGS.output_dir)
  reloaded = pretrained.model(inputs, training=False)
  difference = np.abs(np.asarray(reloaded["pooled_output"])
                      - np.asarray(outputs["pooled_output"])).max()
  print(f"checkpoint: {checkpoint} ({len(pretrained.load_report.loaded)} "
        f"variables in the original names); reloaded max difference: "
        f"{difference}")
  if difference != 0:
    raise SystemExit("reloaded model differs from the saved one")


if __name__ == "__main__":
  logging.set_verbosity(logging.WARNING)
  app.run(main)
