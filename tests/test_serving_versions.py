"""The interpreters that serve_export also serves with (the TensorFlow 2.21
leg of .ci/run names the 2.20 environment's) run another TensorFlow, with
its TensorFlow Text: otherwise the cross-version checks check nothing."""

import subprocess

import pytest
import tensorflow as tf

from tests.support.serving import OTHER_SERVERS


@pytest.mark.skipif(not OTHER_SERVERS, reason=(
    "BERT_TF_ALSO_SERVE_WITH names no other interpreter (the TensorFlow "
    "2.21 leg of .ci/run names the 2.20 environment's)"))
@pytest.mark.parametrize("python", OTHER_SERVERS)
def test_other_servers_run_another_tensorflow_minor_version(python):
  versions = subprocess.run(
      [python, "-c", "import tensorflow as tf, tensorflow_text as text; "
                     "print(tf.__version__, text.__version__)"],
      capture_output=True, text=True, check=True, timeout=300,
      cwd="/").stdout.split()
  minor = lambda version: version.split(".")[:2]
  assert minor(versions[0]) != minor(tf.__version__), versions
  assert minor(versions[1]) == minor(versions[0]), versions
