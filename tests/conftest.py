"""Shared fixtures: the ../shared data and tiny configs."""

import importlib.metadata
import importlib.util
import os

import pytest

from tests.helpers import SHARED_DIR

# tf-models-official 2.20.0, the test extra, requires TensorFlow 2.20.
_MODEL_GARDEN_TENSORFLOW = "2.20"


def pytest_collection_modifyitems(config, items):
  """Tests marked `shared` skip without ../shared, and tests marked
  `model_garden` without TF Model Garden (installable only with TensorFlow
  2.20), but never in CI where they can run."""
  in_ci = os.environ.get("CI") == "true"
  skips = {}
  if not os.path.isdir(SHARED_DIR):
    if in_ci:
      raise pytest.UsageError(f"CI=true but {SHARED_DIR} is missing")
    skips["shared"] = f"{SHARED_DIR} not present (a fresh clone)"
  if importlib.util.find_spec("official") is None:
    tensorflow = importlib.metadata.version("tensorflow")
    if in_ci and tensorflow.startswith(_MODEL_GARDEN_TENSORFLOW + "."):
      raise pytest.UsageError(
          "CI=true on TensorFlow 2.20 but TF Model Garden is not installed "
          '(pip install -e ".[test]")')
    skips["model_garden"] = (
        "compares with TF Model Garden (tf-models-official, the test "
        f"extra), which requires TensorFlow {_MODEL_GARDEN_TENSORFLOW}; this "
        f"is {tensorflow}")
  for item in items:
    for marker, reason in skips.items():
      if marker in item.keywords:
        item.add_marker(pytest.mark.skip(reason=reason))


def pytest_configure(config):
  config.addinivalue_line("markers",
                          "shared: needs the ../shared data and references")
  config.addinivalue_line("markers",
                          "model_garden: compares with TF Model Garden")
  config.addinivalue_line(
      "markers", "rerun: a long program run repeating TensorFlow work that "
      "other tests do too (the demo, resuming after a kill, retraining with "
      "--bucket_by_length); CI's TensorFlow 2.21 leg leaves it out")
