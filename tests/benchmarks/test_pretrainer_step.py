"""benchmarks/pretrainer_step.py's routes, in this process on a tiny config:
each stack's bfloat16 step computes its matrix products in bfloat16, with
the global policies left as they were; the routes and speed-ups are those
--dtypes names (timings are never asserted)."""

import os

import keras
import pytest
import tensorflow as tf

from tests.support.helpers import PROJECT_DIR

pytestmark = pytest.mark.model_garden

TINY = ["--num_layers=1", "--hidden_size=32", "--num_heads=2",
        "--intermediate_size=37", "--vocab_size=100", "--seq_length=16",
        "--batch_size=4", "--num_predictions=3"]
PRODUCTS = ("MatMul", "BatchMatMulV2", "BatchMatMulV3", "Einsum")


@pytest.fixture(name="pretrainer_step")
def benchmark_module(monkeypatch):
  monkeypatch.syspath_prepend(os.path.join(PROJECT_DIR, "benchmarks"))
  import pretrainer_step  # pylint: disable=import-outside-toplevel
  return pretrainer_step


def product_dtypes(graph):
  """The dtypes of the graph's matrix products, forward and backward."""
  return {op.outputs[0].dtype for op in graph.get_operations()
          if op.type in PRODUCTS}


@pytest.mark.parametrize("stack", ["bert_tf", "model_garden"])
def test_a_bfloat16_step_computes_its_products_in_bfloat16(pretrainer_step,
                                                           stack):
  args = pretrainer_step.parse_args(TINY)
  batch = {name: tf.constant(value)
           for name, value in pretrainer_step.make_batch(args).items()}
  step, _ = pretrainer_step.BUILDERS[stack](args, batch, "bfloat16")
  assert product_dtypes(step.get_concrete_function(batch).graph) == {
      tf.bfloat16}
  assert keras.config.dtype_policy().name == "float32"
  import tf_keras  # pylint: disable=import-outside-toplevel
  assert tf_keras.mixed_precision.global_policy().name == "float32"


def test_routes_and_speed_ups_are_those_the_dtypes_name(pretrainer_step):
  both = pretrainer_step.parse_args(["--dtypes=bfloat16,float32,bfloat16"])
  assert pretrainer_step.routes(both) == [
      ("bert_tf", "bfloat16"), ("model_garden", "bfloat16"),
      ("bert_tf", "float32"), ("model_garden", "float32")]
  times = {("bert_tf", "bfloat16"): 1.0, ("model_garden", "bfloat16"): 3.0,
           ("bert_tf", "float32"): 2.0, ("model_garden", "float32"): 4.0}
  assert pretrainer_step.speed_ups(times, both.dtypes) == {
      "bert_tf bfloat16 over model_garden bfloat16": 3.0,
      "bert_tf float32 over model_garden float32": 2.0,
      "bert_tf bfloat16 over bert_tf float32": 2.0,
      "model_garden bfloat16 over model_garden float32": 4.0 / 3.0}
  one = pretrainer_step.parse_args(["--dtypes=bfloat16"])
  assert list(pretrainer_step.speed_ups(times, one.dtypes)) == [
      "bert_tf bfloat16 over model_garden bfloat16"]
  for flag in ("--dtypes=", "--dtypes=float32,float16"):
    with pytest.raises(SystemExit):
      pretrainer_step.parse_args([flag])
