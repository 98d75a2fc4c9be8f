"""The one check of a run's options, shared by every entry point.

Each entry point's options dataclass names its fields after their flags,
so an option out of range is refused in the same words everywhere, naming
the flag: `--train_batch_size=0: must be at least 1`.
"""


def check_at_least_one(options, names):
  """Raises ValueError for the first of `names` below 1."""
  for name in names:
    value = getattr(options, name)
    if value < 1:
      raise ValueError(f"--{name}={value}: must be at least 1")


def check_not_negative(options, names):
  """Raises ValueError for the first of `names` below 0."""
  for name in names:
    value = getattr(options, name)
    if value < 0:
      raise ValueError(f"--{name}={value}: must not be negative")


def check_one_of(options, name, choices):
  """Raises ValueError where `name` is none of `choices`."""
  value = getattr(options, name)
  if value not in choices:
    raise ValueError(f"--{name}={value}: expected "
                     f"{' or '.join(map(str, choices))}")
