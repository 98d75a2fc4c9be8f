"""benchmarks/gpu_suite.py --smoke: one JSON object on stdout with every
section, positive finite figures and ratios that are their quotients (the
timings themselves are never asserted), run in the GPU run's own precision
(bfloat16, XLA), so that its code paths are checked before a GPU is lent."""

import json
import math
import os
import subprocess
import sys

import pytest

from tests.support.helpers import PROJECT_DIR

pytestmark = pytest.mark.model_garden

MEASUREMENTS = {"pretraining": {"bert_base", "bert_large"},
                "squad": {"bert_base"},
                "prediction": {"latency", "throughput"}}


@pytest.fixture(scope="module")
def report():
  """The smoke run's JSON; stdout must hold nothing else."""
  result = subprocess.run(
      [sys.executable, os.path.join(PROJECT_DIR, "benchmarks", "gpu_suite.py"),
       "--smoke"], capture_output=True, text=True, timeout=300, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  return json.loads(result.stdout)


def measurements(report):
  return [(section, name, report[section][name])
          for section, names in MEASUREMENTS.items() for name in names]


def numbers(value):
  """Every number in a JSON value (booleans are not numbers here)."""
  if isinstance(value, dict):
    return [number for item in value.values() for number in numbers(item)]
  if isinstance(value, (int, float)) and not isinstance(value, bool):
    return [value]
  return []


def test_every_section_and_measurement_is_reported(report):
  assert set(MEASUREMENTS) < set(report)
  for section, names in MEASUREMENTS.items():
    assert set(report[section]) == names | {"wall_s"}
  assert report["smoke"] is True
  assert (report["dtype"], report["xla"]) == ("bfloat16", True)
  assert report["tensorflow"] and report["device"]
  assert report["prediction"]["latency"]["config"]["batch_size"] == 1
  assert report["prediction"]["latency"]["unit"] == "ms"


def test_every_figure_is_positive_and_finite(report):
  for section, name, result in measurements(report):
    for key in ("bert_tf", "model_garden", "ratio", "wall_s"):
      assert isinstance(result[key], float), (section, name, key)
  values = numbers(report)
  assert all(math.isfinite(value) and value > 0 for value in values), values


def test_ratios_are_the_figures_quotients_above_1_when_bert_tf_is_faster(
    report):
  for section, name, result in measurements(report):
    assert result["unit"] in ("examples/sec", "ms"), (section, name)
    ours, theirs = result["bert_tf"], result["model_garden"]
    expected = ours / theirs if result["unit"] == "examples/sec" \
        else theirs / ours
    assert math.isclose(result["ratio"], expected, rel_tol=1e-12), (
        section, name)


def test_the_anchor_is_a_published_figure_not_measured(report):
  large = report["pretraining"]["bert_large"]
  anchor = large["anchor"]
  assert anchor["measured_in_this_run"] is False
  assert "not measured in this run" in anchor["source"]
  assert math.isclose(anchor["bert_tf_ratio"],
                      large["bert_tf"] / anchor["examples_per_sec"],
                      rel_tol=1e-12)

