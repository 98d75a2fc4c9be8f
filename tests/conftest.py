"""Shared fixtures: the ../shared data and tiny configs."""

import os

import pytest

from tests.helpers import SHARED_DIR


def pytest_collection_modifyitems(config, items):
  """Tests marked `shared` skip without ../shared, but never in CI."""
  if os.path.isdir(SHARED_DIR):
    return
  if os.environ.get("CI") == "true":
    raise pytest.UsageError(f"CI=true but {SHARED_DIR} is missing")
  skip = pytest.mark.skip(reason=f"{SHARED_DIR} not present (a fresh clone)")
  for item in items:
    if "shared" in item.keywords:
      item.add_marker(skip)


def pytest_configure(config):
  config.addinivalue_line("markers",
                          "shared: needs the ../shared data and references")
