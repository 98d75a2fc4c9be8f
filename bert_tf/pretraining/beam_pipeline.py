"""create_pretraining_data on Apache Beam: one shard per input file, on any
runner (DirectRunner here, Dataflow, Flink or Spark on a cluster).

Each input file is one job, exactly as `create_in_parallel` runs it: the
original's records for that file alone, with the same flags and seed. Workers
write each shard under a temporary name; when every file is done, a last step
renames them all over their final names, so a run replaces its set of shards
together or not at all, and a re-run with the same inputs and flags writes
the same bytes. A file that fails (no text, not text) is counted and named;
no shard of that run is then written.

Memory per worker is bounded by the largest input file: the original's
algorithm holds one file's documents and instances at a time.

Apache Beam is an optional extra (`pip install -e ".[beam]"`); the
machinery every per-file pipeline shares (staging, renaming together,
counters, Beam's options) is bert_tf.runs.beam_runs.
"""

from bert_tf.pretraining import documents, pipeline as pretraining_data
from bert_tf.runs import beam_runs


class _CreateShard(beam_runs.ShardWriter):
  """One input file's records, as create_in_parallel writes them."""

  # Beam counters (live in Dataflow's, Flink's and Spark's monitoring
  # pages).
  namespace = "bert_tf.create_pretraining_data"
  per_shard = ("records_per_shard", "instances")

  def __init__(self, tokenizer_options, options, random_seed):
    self._arguments = (tokenizer_options, options, random_seed)

  def write(self, input_file, staged_file):
    documents.check_text_files([input_file])
    summary = pretraining_data.create_shard(input_file, staged_file,
                                            *self._arguments)
    return {"documents": summary.documents, "tokens": summary.tokens,
            "instances": summary.instances}

  def describe(self, counts):
    return (f"{counts['documents']} documents, {counts['tokens']} tokens, "
            f"{counts['instances']} records")


def create_with_beam(input_files, output_dir, tokenizer_options, options,
                     random_seed, pipeline_options):
  """Writes <output_dir>/<input file name>.tfrecord for every input file.

  Args:
    input_files: text files (local paths or URLs such as gs://).
    output_dir: where the shards go.
    tokenizer_options: pretraining_data.TokenizerOptions.
    options: InstanceOptions.
    random_seed: the original's --random_seed, for every file.
    pipeline_options: apache_beam PipelineOptions (the runner and its
      settings; beam_runs.pipeline_options).

  Returns:
    A pretraining_data.RunSummary, from the run's Beam counters (None on a
    runner that reports none).

  Raises:
    ValueError: input files fail (the first is named, with its error), or
      two input files would write the same shard.
  """
  outputs = pretraining_data.output_files_for(input_files, output_dir)
  values, seconds = beam_runs.write_per_file(
      outputs, output_dir,
      _CreateShard(tokenizer_options, options, random_seed),
      pipeline_options)
  if not values:
    return None
  records = values["records_per_shard"]
  return pretraining_data.RunSummary(
      files=len(outputs), documents=values["documents"],
      tokens=values["tokens"], instances=values["instances"],
      records_per_shard=(records.min, records.mean, records.max),
      seconds=seconds)
