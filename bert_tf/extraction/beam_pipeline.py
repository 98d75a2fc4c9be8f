"""extract_features on Apache Beam: one output per input file, on any runner
(DirectRunner here, Dataflow, Flink or Spark on a cluster).

Each input file gives <output_dir>/<input file name>.<jsonl or npz>: its
lines' output exactly as extract_features writes it for that file alone,
since each worker runs the same extraction.FileExtractor, built once per
worker (the model loaded in DoFn.setup), whatever it writes (the per-token
layers, dense or sparse sentence embeddings). The outputs of a run appear
together or not at all, and a file that fails is named
(bert_tf.runs.beam_runs).

Memory per worker is bounded by the largest input file: its features are
made at once, as extract_features makes its input's.
"""

from bert_tf.extraction import extraction
from bert_tf.files import input_checks, output_paths
from bert_tf.runs import beam_runs
from bert_tf.training import distribution


class _ExtractFile(beam_runs.ShardWriter):
  """One input file's output, by the FileExtractor the worker built."""

  # Beam counters (live in Dataflow's, Flink's and Spark's monitoring
  # pages).
  namespace = "bert_tf.extract_features"
  per_shard = ("lines_per_shard", "lines")

  def __init__(self, options):
    self._options = options
    self._extractor = None

  def setup(self):
    """The worker's model: on its GPU where it has one, else its CPU."""
    self._extractor = extraction.FileExtractor(
        self._options, distribution.create_strategy("one_device"),
        extraction.check_extraction_model(self._options))

  def write(self, input_file, staged_file):
    return {"lines": self._extractor.extract_file(input_file, staged_file)}


def extract_with_beam(options, output_dir, pipeline_options):
  """Writes the output of each of options.input_file's files into
  output_dir, every option and path checked first.

  Args:
    options: extraction.ExtractionOptions; input_file: comma-separated
      globs; without output_file and export_dir. Each worker builds its
      model from them.
    output_dir: where the outputs go.
    pipeline_options: apache_beam PipelineOptions (beam_runs.
      pipeline_options).

  Returns:
    (files, lines, seconds), from the run's Beam counters; lines is None
    on a runner that reports none.

  Raises:
    ValueError: a bad option or path, named; input files fail (the first
      is named, with its error).
  """
  if not options.input_file:
    raise ValueError("--input_file is required: the files to extract")
  for flag, value in (("--output_file", options.output_file),
                      ("--export_dir", options.export_dir)):
    if value:
      raise ValueError(f"{flag}: a Beam run writes one output per input "
                       f"file into --output_dir; run without --beam_runner "
                       f"for {flag}")
  run = extraction.check_extraction_model(options)
  input_files = input_checks.input_files(options.input_file)
  # Two input files of one name would write one output: refused.
  outputs = output_paths.outputs_for_inputs(input_files, output_dir,
                                            f".{options.output_format}")
  output_paths.check_outputs(
      outputs=[("--output_dir", output) for output in outputs.values()],
      inputs=[*(("--input_file", path) for path in input_files),
              *run.model.input_files()],
      output_dirs=[("--output_dir", output_dir)])
  values, seconds = beam_runs.write_per_file(
      outputs, output_dir, _ExtractFile(options), pipeline_options)
  return len(outputs), values.get("lines"), seconds
