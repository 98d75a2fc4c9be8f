"""Apache Beam on the command line of a program that writes one output per
input file (create_pretraining_data, extract_features): its --beam_runner,
with Beam's own pipeline options passed through as unknown flags."""

import importlib


def check_beam_args(beam_args, beam_runner):
  """Raises ValueError for flags the script does not define, unless they
  go to Beam (with --beam_runner)."""
  if beam_args and beam_runner is None:
    raise ValueError(f"unknown flag {beam_args[0]} (Apache Beam's pipeline "
                     f"options need --beam_runner)")


def beam_pipeline(module):
  """The bert_tf Beam pipeline `module` (e.g.
  bert_tf.pretraining.beam_pipeline), or one line saying what to install."""
  try:
    return importlib.import_module(module)
  except ImportError as error:
    if not (error.name or "").startswith("apache_beam"):
      raise
    raise ValueError('--beam_runner needs Apache Beam: pip install -e '
                     '".[beam]" (or pip install apache-beam)') from error


def beam_runs():
  """bert_tf.runs.beam_runs (Beam's options, paths workers reach), once
  beam_pipeline has imported Apache Beam."""
  return importlib.import_module("bert_tf.runs.beam_runs")
