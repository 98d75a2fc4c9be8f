"""create_pretraining_data's pipeline: text files -> instances -> TFRecords.

One run treats its input files as the original treats them: one corpus, one
random.Random(random_seed), records written round-robin to the outputs.
`create_in_parallel` runs one such job per input file in worker processes,
the original's advice to shard big corpora, made automatic.
"""

import concurrent.futures
import dataclasses
import functools
import logging
import random
import time

from bert_tf import parallel
from bert_tf import tokenization
from bert_tf.data.tfrecords import RoundRobinWriter
from bert_tf.files import atomic_outputs, output_paths
from bert_tf.pretraining import features as pretraining_features
from bert_tf.pretraining.documents import read_documents
from bert_tf.pretraining.instances import instance_passes, shuffle
from bert_tf.wordpiece.masking_vocabulary import MaskingVocabulary

logger = logging.getLogger(__name__)

# The original logs its first 20 examples in full.
_LOGGED_EXAMPLES = 20
# Instances from which serialising them in forks costs less than forking.
_SERIALIZED_IN_FORKS_FROM = 4096
# Records written between progress lines.
_LOGGED_EVERY = 1 << 16


@dataclasses.dataclass(frozen=True)
class TokenizerOptions:
  vocab_file: str
  do_lower_case: bool = True


@dataclasses.dataclass(frozen=True)
class CreationSummary:
  """What one job read and wrote: its documents and their WordPiece tokens,
  and its instances (one record each)."""
  documents: int
  tokens: int
  instances: int


@dataclasses.dataclass(frozen=True)
class RunSummary:
  """A run over many files, for the log line at its end."""
  files: int
  documents: int
  tokens: int
  instances: int
  records_per_shard: tuple  # (min, mean, max)
  seconds: float

  @classmethod
  def of(cls, summaries, seconds):
    """From the CreationSummary of each file."""
    records = [summary.instances for summary in summaries]
    return cls(len(summaries), sum(s.documents for s in summaries),
               sum(s.tokens for s in summaries), sum(records),
               (min(records), sum(records) / len(records), max(records)),
               seconds)

  def log(self):
    low, mean, high = self.records_per_shard
    logger.info(
        "Done: %d files, %d documents, %d tokens, %d instances in %.1f s "
        "(%.0f tokens/s); records per shard: min %d, mean %.1f, max %d",
        self.files, self.documents, self.tokens, self.instances,
        self.seconds, self.tokens / max(self.seconds, 1e-9), low, mean, high)


def create_pretraining_data(input_files, output_files, tokenizer, options,
                            random_seed, atomic=True, processes=None):
  """Writes the original's records for these inputs.

  Args:
    input_files: text files, one sentence per line, blank line between
      documents; read in order as one corpus.
    output_files: TFRecord files, written round-robin; together and
      atomically (atomic_outputs.AtomicFiles) unless atomic=False, for files a
      caller has staged itself.
    tokenizer: a tokenization.FullTokenizer.
    options: InstanceOptions.
    random_seed: the original's --random_seed.
    processes: processes to tokenise and serialise in (None: one per
      core).

  Returns:
    A CreationSummary.

  Raises:
    ValueError: the inputs hold no text.
  """
  with parallel.paused():
    documents = read_documents(input_files, tokenizer, processes)
    if not documents:
      raise ValueError(f"no text in {', '.join(input_files)}")
    tokens = sum(len(sentence) for document in documents
                 for sentence in document)
    rng = random.Random(random_seed)
    serialize = functools.partial(_serialize, options=options)
    instances, passes = [], []
    for number, made in enumerate(instance_passes(
        documents, MaskingVocabulary(tokenizer.vocab), options, rng), start=1):
      instances += made
      worth_forking = len(made) >= _SERIALIZED_IN_FORKS_FROM
      if number < options.dupe_factor:  # in a fork while the next is made
        passes.append(parallel.started(serialize, made, processes,
                                     worth_forking))
      else:  # the last pass, on every core
        last = parallel.apply(serialize, made, processes, worth_forking)
    records = [record for made in passes for record in made.result()]
    records += last
    order = list(range(len(instances)))
    shuffle(order, rng)  # the original's shuffle of the instances
  summary = CreationSummary(documents=len(documents), tokens=tokens,
                            instances=len(instances))
  del documents
  for index in order[:_LOGGED_EXAMPLES]:
    _log_example(instances[index], tokenizer)
  del instances
  start = time.time()
  with RoundRobinWriter(output_files, atomic) as writer:
    for index in order:
      writer.write(records[index])
      if writer.written % _LOGGED_EVERY == 0 or writer.written == len(order):
        elapsed = time.time() - start
        logger.info("Wrote %d/%d instances (%.0f/s, %.0f s left)",
                    writer.written, len(order),
                    writer.written / max(elapsed, 1e-9),
                    (len(order) - writer.written) * elapsed / writer.written)
  logger.info("Wrote %d total instances to %s in %.1f s", writer.written,
              ", ".join(output_files), time.time() - start)
  return summary


def _serialize(instances, options):
  """The records of a list of instances."""
  return [pretraining_features.serialize_instance(
      instance, options.max_seq_length, options.max_predictions_per_seq)
          for instance in instances]


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
  return output_paths.output_for_input(input_file, output_dir, ".tfrecord")


def output_files_for(input_files, output_dir):
  """{input file: its output file in output_dir}, one shard per input.

  Raises:
    ValueError: two input files would write the same output file.
  """
  return output_paths.outputs_for_inputs(input_files, output_dir,
                                         ".tfrecord")


def create_in_parallel(input_files, output_dir, tokenizer_options, options,
                       random_seed, num_workers):
  """One job per input file, as if the original ran on that file alone.

  Returns:
    A RunSummary.

  Raises:
    ValueError: two input files would write the same output file.
  """
  outputs = output_files_for(input_files, output_dir)
  start, summaries = time.time(), {}
  # Workers write the staged temporaries; all are renamed when all are done.
  staged = atomic_outputs.AtomicFiles(list(outputs.values()), "wb")
  with staged, parallel.pool(num_workers, _log_as_this_process) as pool:
    futures = {
        pool.submit(create_shard, input_file, temporary, tokenizer_options,
                    options, random_seed): input_file
        for input_file, temporary in zip(outputs, staged.temporaries)}
    for future in concurrent.futures.as_completed(futures):
      summaries[futures[future]] = future.result()
      total = sum(summary.instances for summary in summaries.values())
      logger.info("%d/%d files done, %d instances (%.0f/s)", len(summaries),
                  len(outputs), total, total / (time.time() - start))
  return RunSummary.of(list(summaries.values()), time.time() - start)


def _log_as_this_process():
  """A worker logs as this process does (a fork inherits the handlers; a
  fresh interpreter gets them here)."""
  logging.basicConfig(level=logging.INFO,
                      format="%(asctime)s %(processName)s %(message)s")


_worker_tokenizers = {}


def create_shard(input_file, staged_file, tokenizer_options, options,
                 random_seed):
  """One input file's records, as the original writes for it alone, written
  straight into a temporary the caller staged (and renames); each worker
  process builds its tokenizer once.

  Returns:
    A CreationSummary.
  """
  if tokenizer_options not in _worker_tokenizers:
    _worker_tokenizers[tokenizer_options] = tokenization.FullTokenizer(
        tokenizer_options.vocab_file, tokenizer_options.do_lower_case)
  return create_pretraining_data(
      [input_file], [staged_file], _worker_tokenizers[tokenizer_options],
      options, random_seed, atomic=False, processes=1)
