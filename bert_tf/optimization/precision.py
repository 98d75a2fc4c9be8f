"""--dtype: float32, or mixed precision with bfloat16 or float16 compute.

Variables, optimizer slots and checkpoints stay float32 in every case; the
model computes in the chosen dtype and returns float32 log-probabilities.
float16 needs dynamic loss scaling so that small gradients do not flush to
zero; bfloat16 has float32's range and needs none.
"""

import contextlib
import functools
import logging

import keras
import tensorflow as tf

logger = logging.getLogger(__name__)

# The /proc/cpuinfo flags of units that compute bfloat16 products: Intel's
# AMX tiles (Sapphire Rapids on) and AVX512-BF16 (Cooper Lake, Sapphire
# Rapids, AMD Zen 4 and 5). Without either, TensorFlow emulates bfloat16
# in float32 with conversions on every side, and float32 is faster.
BFLOAT16_FLAGS = ("amx_bf16", "avx512_bf16")

POLICIES = {"float32": "float32", "bfloat16": "mixed_bfloat16",
            "float16": "mixed_float16"}


def check_dtype(dtype):
  if dtype not in POLICIES:
    raise ValueError(f"--dtype={dtype}: expected one of "
                     f"{', '.join(POLICIES)}")


@contextlib.contextmanager
def dtype_policy(dtype):
  """Layers built inside compute in `dtype` (Keras 3 layers read the global
  policy when they are created, and sublayers do not inherit their parent's)."""
  check_dtype(dtype)
  with keras_policy(POLICIES[dtype]):
    yield


@contextlib.contextmanager
def keras_policy(policy):
  """Layers built inside take `policy` (a Keras dtype policy, its name or
  its config; None: the global one, as it is)."""
  previous = keras.config.dtype_policy()
  if policy is not None:
    keras.config.set_dtype_policy(keras.dtype_policies.get(policy))
  try:
    yield
  finally:
    keras.config.set_dtype_policy(previous)


def with_loss_scaling(optimizer, dtype):
  """The optimizer, wrapped in dynamic loss scaling for float16."""
  check_dtype(dtype)
  if dtype != "float16":
    return optimizer
  return keras.optimizers.LossScaleOptimizer(optimizer)


def cpu_flags(cpuinfo="/proc/cpuinfo"):
  """The CPU's feature flags as Linux lists them; None where the system
  does not say (another OS, or no such file)."""
  try:
    with open(cpuinfo, encoding="utf-8") as lines:
      for line in lines:
        name, _, value = line.partition(":")
        if name.strip() == "flags":
          return frozenset(value.split())
  except OSError:
    return None
  return None


def bfloat16_units(flags):
  """Of BFLOAT16_FLAGS, those in `flags` (cpu_flags())."""
  return [flag for flag in BFLOAT16_FLAGS if flag in flags]


@functools.cache
def warn_if_emulated(compute_dtype):
  """Logs one warning per process, where a model computes in bfloat16 on
  a CPU with no bfloat16 units and no accelerator: float32 is faster
  there."""
  if compute_dtype != "bfloat16" or tf.config.list_physical_devices("GPU"):
    return
  flags = cpu_flags()
  if flags is not None and not bfloat16_units(flags):
    logger.warning(
        "Computing in bfloat16 on a CPU with no bfloat16 units (none of %s "
        "in /proc/cpuinfo): TensorFlow emulates it, and float32 will be "
        "faster", ", ".join(BFLOAT16_FLAGS))
