"""create_pretraining_data's pipeline: text files -> instances -> TFRecords.

One run treats its input files as the original treats them: one corpus, one
random.Random(random_seed), records written round-robin to the outputs.
`create_in_parallel` runs one such job per input file in worker processes,
the original's advice to shard big corpora, made automatic.
"""

import concurrent.futures
import dataclasses
import logging
import multiprocessing
import os
import random
import time

from bert_tf import collector, file_io, forked, tokenization
from bert_tf.data import pretraining_features
from bert_tf.data.documents import read_documents
from bert_tf.data.pretraining_instances import (Vocabulary,
                                                create_training_instances)
from bert_tf.data.tfrecords import RoundRobinWriter

logger = logging.getLogger(__name__)

# The original logs its first 20 examples in full.
_LOGGED_EXAMPLES = 20
# Instances serialised at a time (their records are held until written),
# on every core from _SERIALIZED_IN_FORKS_FROM on (forking costs less).
_SERIALIZED_AT_ONCE = 1 << 16
_SERIALIZED_IN_FORKS_FROM = 4096


@dataclasses.dataclass(frozen=True)
class TokenizerOptions:
  vocab_file: str
  do_lower_case: bool = True


def create_pretraining_data(input_files, output_files, tokenizer, options,
                            random_seed, atomic=True, processes=None):
  """Writes the original's records for these inputs; returns their number.

  Args:
    input_files: text files, one sentence per line, blank line between
      documents; read in order as one corpus.
    output_files: TFRecord files, written round-robin; together and
      atomically (file_io.AtomicFiles) unless atomic=False, for files a
      caller has staged itself.
    tokenizer: a tokenization.FullTokenizer.
    options: InstanceOptions.
    random_seed: the original's --random_seed.
    processes: processes to tokenise and serialise in (None: one per
      core).

  Raises:
    ValueError: the inputs hold no text.
  """
  with collector.paused():
    documents = read_documents(input_files, tokenizer, processes)
    if not documents:
      raise ValueError(f"no text in {', '.join(input_files)}")
    instances = create_training_instances(
        documents, Vocabulary(tokenizer.vocab), options,
        random.Random(random_seed))
  del documents
  for instance in instances[:_LOGGED_EXAMPLES]:
    _log_example(instance, tokenizer)
  start = time.time()
  with RoundRobinWriter(output_files, atomic) as writer:
    for first in range(0, len(instances), _SERIALIZED_AT_ONCE):
      for record in _serialized(instances[first:first + _SERIALIZED_AT_ONCE],
                                options, processes):
        writer.write(record)
      written, elapsed = writer.written, time.time() - start
      logger.info("Wrote %d/%d instances (%.0f/s, %.0f s left)", written,
                  len(instances), written / elapsed,
                  (len(instances) - written) * elapsed / written)
  logger.info("Wrote %d total instances to %s in %.1f s", writer.written,
              ", ".join(output_files), time.time() - start)
  return writer.written


def _serialized(instances, options, processes):
  """The instances' records, serialised on every core (forked.apply) when
  there are enough of them."""
  def serialize(chunk):
    return [pretraining_features.serialize_instance(
        instance, options.max_seq_length, options.max_predictions_per_seq)
            for instance in chunk]

  return forked.apply(
      serialize, instances, processes,
      worth_forking=len(instances) >= _SERIALIZED_IN_FORKS_FROM)


def _log_example(instance, tokenizer):
  logger.info("*** Example ***")
  logger.info("tokens: %s", " ".join(
      tokenizer.convert_ids_to_tokens(instance.input_ids)))
  logger.info("input_ids: %s", " ".join(map(str, instance.input_ids)))
  logger.info("segment lengths: %d + %d", instance.first_segment_length,
              len(instance.input_ids) - instance.first_segment_length)
  logger.info("masked_lm_positions: %s",
              " ".join(map(str, instance.masked_lm_positions)))
  logger.info("masked_lm_ids: %s", " ".join(map(str, instance.masked_lm_ids)))
  logger.info("next_sentence_labels: %d", int(instance.is_random_next))


def output_file_for(input_file, output_dir):
  """<output_dir>/<input file name>.tfrecord."""
  return os.path.join(output_dir, os.path.basename(input_file) + ".tfrecord")


def create_in_parallel(input_files, output_dir, tokenizer_options, options,
                       random_seed, num_workers):
  """One job per input file, as if the original ran on that file alone.

  Returns:
    {input file: records written}.

  Raises:
    ValueError: two input files would write the same output file.
  """
  outputs = {}
  for input_file in input_files:
    output = output_file_for(input_file, output_dir)
    if output in outputs.values():
      clash = next(name for name, path in outputs.items() if path == output)
      raise ValueError(f"{input_file} and {clash} would both write {output}; "
                       f"give input files distinct names")
    outputs[input_file] = output
  # spawn: TensorFlow is not safe to fork once initialised.
  context = multiprocessing.get_context("spawn")
  start, written = time.time(), {}
  # Workers write the staged temporaries; all are renamed when all are done.
  staged = file_io.AtomicFiles(list(outputs.values()), "wb")
  with staged, concurrent.futures.ProcessPoolExecutor(
      num_workers, mp_context=context,
      initializer=_configure_worker_logging) as pool:
    futures = {
        pool.submit(_create_one, input_file, temporary, tokenizer_options,
                    options, random_seed): input_file
        for input_file, temporary in zip(outputs, staged.temporaries)}
    for future in concurrent.futures.as_completed(futures):
      written[futures[future]] = future.result()
      total = sum(written.values())
      logger.info("%d/%d files done, %d instances (%.0f/s)", len(written),
                  len(outputs), total, total / (time.time() - start))
  return written


_worker_tokenizers = {}


def _configure_worker_logging():
  logging.basicConfig(level=logging.INFO,
                      format="%(asctime)s %(processName)s %(message)s")


def _create_one(input_file, staged_file, tokenizer_options, options,
                random_seed):
  """A worker's job, written straight into the parent's staged temporary;
  each worker builds its tokenizer once."""
  if tokenizer_options not in _worker_tokenizers:
    _worker_tokenizers[tokenizer_options] = tokenization.FullTokenizer(
        tokenizer_options.vocab_file, tokenizer_options.do_lower_case)
  return create_pretraining_data(
      [input_file], [staged_file], _worker_tokenizers[tokenizer_options],
      options, random_seed, atomic=False, processes=1)
