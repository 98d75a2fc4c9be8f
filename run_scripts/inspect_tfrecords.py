"""Prints pretraining TFRecords readably and checks their feature lengths.

    python run_scripts/inspect_tfrecords.py --input_file=out.tfrecord \\
      --vocab_file=vocab.txt --max_examples=3 \\
      --max_seq_length=128 --max_predictions_per_seq=20

Each example shows its tokens with the masked positions as
[shown=original], its segments and its next-sentence label, like the log of
the original create_pretraining_data.py. With --max_seq_length and
--max_predictions_per_seq, every record is checked against them, so that a
mismatch with run_pretraining's flags is caught before training; without
them, the lengths the file was written with are reported.
"""

from absl import flags

import program
from bert_tf import tokenization
from bert_tf.checkpoints import folder_vocabulary
from bert_tf.data import tfrecords
from bert_tf.files import input_checks, storage
from bert_tf.pretraining import features as pretraining_features
from bert_tf.wordpiece import rules, vocabulary

flags.DEFINE_string("input_file", None,
                    "TFRecord file(s): comma-separated globs.")
flags.DEFINE_string("vocab_file", None,
                    "vocab.txt, a tokenizer.json or a model directory, to show "
                    "tokens; ids are shown without it.")
flags.DEFINE_integer("max_examples", 5, "How many examples to print.")
flags.DEFINE_integer("max_seq_length", None,
                     "Check every record was written for this length.")
flags.DEFINE_integer("max_predictions_per_seq", None,
                     "Check every record was written for this many "
                     "predictions.")
FLAGS = flags.FLAGS


def token_names(ids, tokenizer, where):
  """The tokens of ids (their numbers without a vocabulary).

  Raises:
    ValueError: an id past the vocabulary, naming the record.
  """
  if tokenizer is None:
    return [str(token_id) for token_id in ids]
  outside = [token_id for token_id in ids
             if token_id not in tokenizer.inv_vocab]
  if outside:
    raise ValueError(f"{where} has token id {outside[0]}, but --vocab_file="
                     f"{FLAGS.vocab_file} has only {len(tokenizer.inv_vocab)} "
                     f"tokens; is it the vocabulary the file was made with?")
  return tokenizer.convert_ids_to_tokens(ids)


def describe(example, tokenizer, where):
  """Lines describing one example, masked positions as [shown=original]."""
  features = example.features.feature
  ids = list(features["input_ids"].int64_list.value)
  length = sum(features["input_mask"].int64_list.value)
  names = token_names(ids[:length], tokenizer, where)
  weights = features["masked_lm_weights"].float_list.value
  positions = features["masked_lm_positions"].int64_list.value
  labels = features["masked_lm_ids"].int64_list.value
  for position, label, weight in zip(positions, labels, weights):
    if weight > 0 and 0 <= position < length:
      original = token_names([label], tokenizer, where)[0]
      names[position] = f"[{names[position]}={original}]"
  segments = features["segment_ids"].int64_list.value[:length]
  first = [name for name, segment in zip(names, segments) if segment == 0]
  second = [name for name, segment in zip(names, segments) if segment == 1]
  label = features[pretraining_features.NEXT_SENTENCE_LABELS].int64_list.value
  return [f"segment A: {' '.join(first)}",
          f"segment B: {' '.join(second)}",
          f"next_sentence_label: {label[0]} "
          f"({'random' if label[0] else 'IsNext'}), "
          f"{sum(weight > 0 for weight in weights)} masked, "
          f"{length} of {len(ids)} positions used"]


def inspect(path, tokenizer):
  """Prints the first --max_examples records, then checks every record."""
  written = None
  for index, record in enumerate(tfrecords.read_records(path)):
    if index >= FLAGS.max_examples:
      break
    where = f"{path}: record {index}"
    example, lengths = pretraining_features.parse_record(record, where)
    written = written or lengths
    print(f"{where} (max_seq_length={lengths[0]}, "
          f"max_predictions_per_seq={lengths[1]}):")
    for line in describe(example, tokenizer, where):
      print(f"  {line}")
  if FLAGS.max_seq_length is None and FLAGS.max_predictions_per_seq is None:
    return
  if written is None:
    first = next(tfrecords.read_records(path), None)
    if first is None:
      raise ValueError(f"{path}: no records")
    _, written = pretraining_features.parse_record(first,
                                                   f"{path}: record 0")
  seq_length = FLAGS.max_seq_length or written[0]
  predictions = FLAGS.max_predictions_per_seq or written[1]
  count = pretraining_features.check_records(
      path, seq_length, predictions,
      len(tokenizer.vocab) if tokenizer else None)
  print(f"{path}: all {count} records match max_seq_length={seq_length}, "
        f"max_predictions_per_seq={predictions}")


def main(_):
  tokenizer = None
  if FLAGS.vocab_file:
    if storage.isdir(FLAGS.vocab_file):
      vocab, _ = folder_vocabulary.vocabulary_of(FLAGS.vocab_file)
    else:
      input_checks.check_input_file("--vocab_file", FLAGS.vocab_file)
      vocab = rules.read_vocabulary(FLAGS.vocab_file)
    # Ids to pieces: the casing only has to be the file's own.
    tokenizer = tokenization.FullTokenizer(
        vocab, vocabulary.vocab_is_lower_cased(vocab))
  paths = input_checks.input_files(FLAGS.input_file)
  for path in paths:
    inspect(path, tokenizer)


if __name__ == "__main__":
  program.run(main, required_flags=["input_file"])
