"""Shared fixtures: the ../shared data and tiny configs."""

import importlib.metadata
import importlib.util
import os

import pytest

from tests.support.helpers import SHARED_DIR

# tf-models-official 2.20.0, in the test extra, requires TensorFlow 2.20.
_TEST_EXTRA_TENSORFLOW = "2.20"


def pytest_collection_modifyitems(config, items):
  """Tests marked `shared` skip without ../shared, and tests marked
  `model_garden` or `beam` without TF Model Garden or Apache Beam (the test
  extra, installable with TensorFlow 2.20), but never in CI where they can
  run."""
  in_ci = os.environ.get("CI") == "true"
  skips = {}
  if not os.path.isdir(SHARED_DIR):
    if in_ci:
      raise pytest.UsageError(f"CI=true but {SHARED_DIR} is missing")
    skips["shared"] = f"{SHARED_DIR} not present (a fresh clone)"
  tensorflow = importlib.metadata.version("tensorflow")
  for marker, module, what in (
      ("model_garden", "official", "TF Model Garden (tf-models-official)"),
      ("beam", "apache_beam", "Apache Beam")):
    if importlib.util.find_spec(module) is not None:
      continue
    if in_ci and tensorflow.startswith(_TEST_EXTRA_TENSORFLOW + "."):
      raise pytest.UsageError(
          f"CI=true on TensorFlow {_TEST_EXTRA_TENSORFLOW} but {what} is not "
          f'installed (pip install -e ".[test]")')
    skips[marker] = (f"needs {what}, which the test extra installs with "
                     f"TensorFlow {_TEST_EXTRA_TENSORFLOW}; this is "
                     f"{tensorflow} without it")
  for item in items:
    for marker, reason in skips.items():
      if marker in item.keywords:
        item.add_marker(pytest.mark.skip(reason=reason))


def pytest_configure(config):
  config.addinivalue_line("markers",
                          "shared: needs the ../shared data and references")
  config.addinivalue_line("markers",
                          "model_garden: compares with TF Model Garden")
  config.addinivalue_line("markers", "beam: runs an Apache Beam pipeline")
  config.addinivalue_line(
      "markers", "rerun: a long program run repeating TensorFlow work that "
      "other tests do too (the demo, resuming after a kill, retraining with "
      "--bucket_by_length, a full disk) or a Python path TensorFlow's version "
      "does not touch (which files a run writes, n-best ranking); CI's "
      "TensorFlow 2.21 leg leaves it out")
