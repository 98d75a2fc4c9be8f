"""--dtype: float32, or mixed precision with bfloat16 or float16 compute.

Variables, optimizer slots and checkpoints stay float32 in every case; the
model computes in the chosen dtype and returns float32 log-probabilities.
float16 needs dynamic loss scaling so that small gradients do not flush to
zero; bfloat16 has float32's range and needs none.
"""

import contextlib

import keras

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
