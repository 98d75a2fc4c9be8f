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

Apache Beam is an optional extra (`pip install -e ".[beam]"`); only this
module imports it.
"""

import contextlib
import logging
import os
import re
import time
import uuid

from bert_tf.files import atomic_outputs, storage
from bert_tf.pretraining import documents, pipeline as pretraining_data


@contextlib.contextmanager
def _quiet_logs():
  """No log records below ERROR: Beam's import tells of cloud clients (GCS,
  BigQuery) this module never uses, and its option parser warns of the
  unknown flags that pipeline_options reports itself."""
  logging.disable(logging.WARNING)
  try:
    yield
  finally:
    logging.disable(logging.NOTSET)


with _quiet_logs():
  import apache_beam as beam  # pylint: disable=g-import-not-at-top
  from apache_beam.metrics import Metrics  # pylint: disable=g-import-not-at-top
  from apache_beam.metrics.metric import MetricsFilter  # pylint: disable=g-import-not-at-top
  from apache_beam.options.pipeline_options import PipelineOptions  # pylint: disable=g-import-not-at-top

logger = logging.getLogger(__name__)

# Beam counters (live in Dataflow's, Flink's and Spark's monitoring pages).
NAMESPACE = "bert_tf.create_pretraining_data"
_COUNTED = ("files", "documents", "tokens", "instances")


class _CreateShard(beam.DoFn):
  """(input file, staged file) -> (input file, whether it was written)."""

  def __init__(self, tokenizer_options, options, random_seed):
    super().__init__()
    self._arguments = (tokenizer_options, options, random_seed)

  def setup(self):
    self._counters = {name: Metrics.counter(NAMESPACE, name)
                      for name in _COUNTED}
    self._records = Metrics.distribution(NAMESPACE, "records_per_shard")
    self._failed = Metrics.string_set(NAMESPACE, "failed_inputs")

  def process(self, job):
    input_file, staged_file = job
    start = time.time()
    try:
      documents.check_text_files([input_file])
      summary = pretraining_data.create_shard(input_file, staged_file,
                                              *self._arguments)
    except (ValueError, OSError) as error:  # the file's fault, not a retry's
      reason = " ".join(str(error).split())
      logger.error("%s failed: %s", input_file, reason)
      if input_file not in reason:
        reason = f"{input_file}: {reason}"
      self._failed.add(reason if reason.startswith("--input_file")
                       else f"--input_file: {reason}")
      yield input_file, False
      return
    for name in _COUNTED[1:]:
      self._counters[name].inc(getattr(summary, name))
    self._counters["files"].inc()
    self._records.update(summary.instances)
    logger.info("%s: %d documents, %d tokens, %d records in %.1f s",
                input_file, summary.documents, summary.tokens,
                summary.instances, time.time() - start)
    yield input_file, True


def _finalize(results, jobs):
  """Renames every staged shard into place if every file succeeded, else
  removes them all. Safe to retry: a staged file already renamed is gone."""
  if not all(written for _, written in results):
    _remove_staged(jobs)
    return
  pending = [(staged_file, output_file) for _, staged_file, output_file in jobs
             if storage.exists(staged_file)]
  atomic_outputs.replace_all([staged for staged, _ in pending],
                      [output for _, output in pending])
  logger.info("Renamed %d shards into place", len(pending))


def _remove_staged(jobs):
  for _, staged_file, _ in jobs:
    if storage.exists(staged_file):
      storage.remove(staged_file)


# Runners whose workers run on other machines than the launcher's.
_REMOTE_RUNNERS = ("DataflowRunner",)


def check_paths_reach_workers(runner, flagged_paths):
  """Raises ValueError, naming the flag, for a local path that a remote
  runner's workers would not find.

  Args:
    runner: the --beam_runner.
    flagged_paths: (flag, path) pairs the workers read or write.
  """
  if runner not in _REMOTE_RUNNERS:
    return
  for flag, path in flagged_paths:
    if not storage.is_url(path):
      raise ValueError(f"{flag}={path}: {runner}'s workers cannot read "
                       f"this machine's files; give a gs:// path")


def pipeline_options(runner, args, num_workers=0):
  """Beam's options: the runner, and the command line's flags that are
  Beam's own (--project, --region, --temp_location, --flink_master, ...).

  Args:
    runner: DirectRunner, DataflowRunner, FlinkRunner, SparkRunner, ...
    args: the flags the script does not define, passed through to Beam.
    num_workers: worker processes for the DirectRunner
      (--direct_num_workers, in multi_processing mode); Beam's
      --num_workers (Dataflow's initial worker count) on other runners.
      0: the runner's default.

  Raises:
    ValueError: a flag is neither the script's nor Beam's, or --runner is
      given (the runner is --beam_runner).
  """
  args = list(args)
  if num_workers and runner == "DirectRunner":
    args += [f"--direct_num_workers={num_workers}",
             "--direct_running_mode=multi_processing"]
  elif num_workers:
    args.append(f"--num_workers={num_workers}")
  options = PipelineOptions(args)
  with _quiet_logs():
    known = options.get_all_options()
    unknown = sorted(
        set(options.get_all_options(retain_unknown_options=True))
        - set(known))
  if unknown:
    raise ValueError(f"--{unknown[0]}: neither a flag of this script nor an "
                     f"Apache Beam pipeline option")
  if known["runner"] is not None:
    raise ValueError("--runner: give the runner as --beam_runner")
  if runner == "DirectRunner":
    # What Beam's DirectRunner runs a batch pipeline on once it has failed
    # to download its Prism runner from GitHub: never reach the network.
    runner = "FnApiRunner"
  return PipelineOptions(args + [f"--runner={runner}"])


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
      settings).

  Returns:
    A pretraining_data.RunSummary, from the run's Beam counters (None on a
    runner that reports none).

  Raises:
    ValueError: input files fail (the first is named, with its error), or
      two input files would write the same shard.
  """
  outputs = pretraining_data.output_files_for(input_files, output_dir)
  storage.makedirs(output_dir)
  atomic_outputs.remove_stale_temporaries(output_dir, "|".join(
      re.escape(os.path.basename(output)) for output in outputs.values()))
  run = uuid.uuid4().hex  # this run's temporaries: <shard>.tmp-<run>
  jobs = [(input_file, f"{storage.resolved(output)}.tmp-{run}",
           storage.resolved(output))
          for input_file, output in outputs.items()]
  # Local workers log to stderr themselves; their logs, relayed, would
  # print every line twice.
  logging.getLogger("apache_beam.runners.portability.local_job_service"
                    ).setLevel(logging.WARNING)
  start = time.time()
  pipeline = beam.Pipeline(options=pipeline_options)
  _ = (pipeline
       | "InputFiles" >> beam.Create(
           [(input_file, staged) for input_file, staged, _ in jobs])
       | "SpreadOverWorkers" >> beam.Reshuffle()
       | "CreateShards" >> beam.ParDo(
           _CreateShard(tokenizer_options, options, random_seed))
       | "AllShards" >> beam.combiners.ToList()
       | "RenameIntoPlace" >> beam.Map(_finalize, jobs))
  try:
    try:
      result = pipeline.run()
    except ImportError as error:  # a runner's own extra, such as Dataflow's
      raise ValueError(f"--beam_runner: {error}") from error
    result.wait_until_finish()
  except BaseException:
    _remove_staged(jobs)  # what a failed or killed run left
    raise
  return _summary(result, len(jobs), time.time() - start)


def _summary(result, files, seconds):
  """The RunSummary of a finished pipeline, from its counters."""
  metrics = result.metrics().query(MetricsFilter().with_namespace(NAMESPACE))
  values = {}
  for kind in ("counters", "distributions", "string_sets"):
    for metric in metrics.get(kind, []):
      value = metric.committed
      values[metric.key.metric.name] = (metric.attempted if value is None
                                        else value)
  failed = sorted(values.get("failed_inputs", ()))
  if failed:
    more = f" ({len(failed) - 1} more failed)" if len(failed) > 1 else ""
    raise ValueError(f"{failed[0]}{more}; no shard of this run was "
                     f"written")
  if "files" not in values:
    logger.warning("The runner reported no counters: no summary")
    return None
  if values["files"] != files:  # a runner without string sets
    raise ValueError(f"{files - values['files']} of {files} input files "
                     f"failed (the workers' logs say why); no shard of this "
                     f"run was written")
  records = values["records_per_shard"]
  return pretraining_data.RunSummary(
      files=files, documents=values["documents"], tokens=values["tokens"],
      instances=values["instances"],
      records_per_shard=(records.min, records.mean, records.max),
      seconds=seconds)
