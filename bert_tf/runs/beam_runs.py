"""Programs that write one output per input file on Apache Beam, on any
runner (DirectRunner here, Dataflow, Flink or Spark on a cluster):
create_pretraining_data's and extract_features' --beam_runner.

    input files -> spread over the workers -> a ShardWriter writes each
    file's output under a staged temporary name -> when every file is done,
    a last step renames them all over their final names

A run so replaces its set of outputs together or not at all. A file that
fails (ValueError or OSError: the file's fault, not a retry's) is counted
and named; no output of that run is then written. What a failed or
interrupted run staged is removed by the launcher, and what a killed one
left by the next run (local paths).

Apache Beam is an optional extra (`pip install -e ".[beam]"`); only modules
named for Beam import this one.
"""

import contextlib
import logging
import os
import re
import time
import uuid

from bert_tf.files import atomic_outputs, run_lock, storage


@contextlib.contextmanager
def _quiet_logs():
  """No log records below ERROR: Beam's import tells of cloud clients (GCS,
  BigQuery) these pipelines never use, and its option parser warns of the
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

# The counter of files written, in every ShardWriter's namespace.
FILES = "files"
# The string set naming the files that failed.
_FAILED = "failed_inputs"


class ShardWriter:
  """What a pipeline does with each input file, on a worker; pickled there.

  Attributes:
    namespace: its Beam counters' (Dataflow's, Flink's and Spark's
      monitoring pages show them live).
    per_shard: (distribution name, count name): the counts whose spread
      over the shards is kept (min, mean, max), or None.
  """
  namespace = None
  per_shard = None

  def setup(self):
    """Once per worker, before its first file: builds what every file
    needs (a tokenizer, a model)."""

  def write(self, input_file, staged_file):
    """Writes input_file's output into staged_file.

    Returns:
      {counter name: count} of this file.

    Raises:
      ValueError, OSError: the file cannot be read or written; it fails
        the run, named.
    """
    raise NotImplementedError

  def describe(self, counts):
    """What a file's log line says of its counts."""
    return ", ".join(f"{count} {name}" for name, count in counts.items())


class _WriteShard(beam.DoFn):
  """(input file, staged file) -> (input file, whether it was written)."""

  def __init__(self, writer):
    super().__init__()
    self._writer = writer

  def setup(self):
    # A local worker logs to the launcher's stderr: Beam's own records of
    # its harness (connections, shutdown) would bury the files' lines.
    logging.getLogger("apache_beam").setLevel(logging.WARNING)
    self._writer.setup()
    self._failed = Metrics.string_set(self._writer.namespace, _FAILED)

  def process(self, job):
    input_file, staged_file = job
    start = time.time()
    try:
      counts = self._writer.write(input_file, staged_file)
    except (ValueError, OSError) as error:  # the file's fault, not a retry's
      reason = " ".join(str(error).split())
      logger.error("%s failed: %s", input_file, reason)
      if input_file not in reason:
        reason = f"{input_file}: {reason}"
      self._failed.add(reason if reason.startswith("--input_file")
                       else f"--input_file: {reason}")
      yield input_file, False
      return
    self._count(counts)
    logger.info("%s: %s in %.1f s", input_file,
                self._writer.describe(counts), time.time() - start)
    yield input_file, True

  def _count(self, counts):
    namespace = self._writer.namespace
    for name, count in counts.items():
      Metrics.counter(namespace, name).inc(count)
    Metrics.counter(namespace, FILES).inc()
    if self._writer.per_shard:
      distribution, name = self._writer.per_shard
      Metrics.distribution(namespace, distribution).update(counts[name])


def _finalize(results, jobs):
  """Renames every staged output into place if every file succeeded, else
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
  """Removes each staged file, and what a writer made under names that
  extend it (its own temporaries)."""
  for _, staged_file, _ in jobs:
    atomic_outputs.remove_temporary(staged_file)


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


def write_per_file(outputs, output_dir, writer, pipeline_options):
  """Writes each input file's output with `writer`, on Beam's workers.

  Args:
    outputs: {input file: its output file in output_dir} (local paths or
      URLs such as gs://).
    output_dir: where the outputs go; created if missing.
    writer: a ShardWriter.
    pipeline_options: apache_beam PipelineOptions (the runner and its
      settings).

  Returns:
    ({counter or distribution name: its value}, seconds), from the run's
    Beam metrics in writer.namespace; the values are {} on a runner that
    reports none.

  Raises:
    ValueError: input files failed (the first is named, with its error),
      or the runner cannot run.
  """
  # The launcher owns output_dir while the run lives: a second run into it
  # is refused, so two runs cannot mix their outputs or remove each
  # other's staged files.
  storage.makedirs(output_dir)
  with run_lock.owned_directory(output_dir, "--output_dir"):
    return _write_staged(outputs, output_dir, writer, pipeline_options)


def _write_staged(outputs, output_dir, writer, pipeline_options):
  """write_per_file's work, output_dir held."""
  atomic_outputs.remove_stale_temporaries(output_dir, "|".join(
      re.escape(os.path.basename(output)) for output in outputs.values()))
  run = uuid.uuid4().hex  # this run's temporaries: <output>.tmp-<run>
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
       | "WriteShards" >> beam.ParDo(_WriteShard(writer))
       | "AllShards" >> beam.combiners.ToList()
       | "RenameIntoPlace" >> beam.Map(_finalize, jobs))
  try:
    try:
      result = pipeline.run()
    except ImportError as error:  # a runner's own extra, such as Dataflow's
      raise ValueError(f"--beam_runner: {error}") from error
    result.wait_until_finish()
  except BaseException:
    _remove_staged(jobs)  # what a failed or interrupted run left
    raise
  return (_checked_metrics(result, writer.namespace, len(jobs)),
          time.time() - start)


def _checked_metrics(result, namespace, files):
  """{name: value} of a finished pipeline's metrics in namespace.

  Raises:
    ValueError: naming the first failed input file.
  """
  metrics = result.metrics().query(MetricsFilter().with_namespace(namespace))
  values = {}
  for kind in ("counters", "distributions", "string_sets"):
    for metric in metrics.get(kind, []):
      value = metric.committed
      values[metric.key.metric.name] = (metric.attempted if value is None
                                        else value)
  failed = sorted(values.pop(_FAILED, ()))
  if failed:
    more = f" ({len(failed) - 1} more failed)" if len(failed) > 1 else ""
    raise ValueError(f"{failed[0]}{more}; no shard of this run was "
                     f"written")
  if FILES not in values:
    logger.warning("The runner reported no counters: no summary")
    return {}
  if values[FILES] != files:  # a runner without string sets
    raise ValueError(f"{files - values[FILES]} of {files} input files "
                     f"failed (the workers' logs say why); no shard of this "
                     f"run was written")
  return values
