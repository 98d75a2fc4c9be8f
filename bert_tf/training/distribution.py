"""The tf.distribute strategy a run asks for with its flags.

one_device: the first GPU, else the CPU. mirrored: all (or --num_gpus)
local GPUs. multi_worker_mirrored: the workers listed in TF_CONFIG.
tpu: a Cloud TPU or pod slice by name, a grpc:// address, or "local" on a
TPU VM. A TPU that cannot be reached is an error that says so at once:
tf.config.experimental_connect_to_cluster would otherwise wait on it for
minutes.
"""

import json
import logging
import os
import socket
import urllib.parse

import tensorflow as tf

logger = logging.getLogger(__name__)

STRATEGIES = ("one_device", "mirrored", "multi_worker_mirrored", "tpu")
_CONNECT_TIMEOUT_SECONDS = 10


def create_strategy(distribution_strategy="one_device", num_gpus=None,
                    tpu=None, tpu_zone=None, gcp_project=None):
  """A tf.distribute.Strategy.

  Args:
    distribution_strategy: one of STRATEGIES; "tpu" when `tpu` is given.
    num_gpus: for mirrored, how many local GPUs (None: all of them).
    tpu, tpu_zone, gcp_project: the Cloud TPU, as the original's flags.

  Raises:
    ValueError: an unknown strategy, or no device for it; the message
      names the flag.
  """
  if tpu:
    distribution_strategy = "tpu"
  if distribution_strategy not in STRATEGIES:
    raise ValueError(f"--distribution_strategy={distribution_strategy}: "
                     f"expected one of {', '.join(STRATEGIES)}")
  if distribution_strategy == "tpu":
    if not tpu:
      raise ValueError("--distribution_strategy=tpu needs --tpu (a TPU name, "
                       "a grpc:// address, or local)")
    return tpu_strategy(tpu, tpu_zone, gcp_project)
  gpus = [f"/gpu:{index}" for index in
          range(len(tf.config.list_physical_devices("GPU")))]
  if distribution_strategy == "one_device":
    device = gpus[0] if gpus else "/cpu:0"
    logger.info("Running on %s", device)
    return tf.distribute.OneDeviceStrategy(device)
  if distribution_strategy == "mirrored":
    if num_gpus is not None:
      if num_gpus > len(gpus):
        raise ValueError(f"--num_gpus={num_gpus}: this machine has "
                         f"{len(gpus)} GPUs")
      gpus = gpus[:num_gpus]
    return tf.distribute.MirroredStrategy(gpus or ["/cpu:0"])
  if "TF_CONFIG" not in os.environ:
    raise ValueError("--distribution_strategy=multi_worker_mirrored needs "
                     "the TF_CONFIG environment variable (cluster and task)")
  try:
    json.loads(os.environ["TF_CONFIG"])
  except json.JSONDecodeError as error:
    raise ValueError(f"TF_CONFIG is not JSON: {error}") from None
  return tf.distribute.MultiWorkerMirroredStrategy()


def tpu_strategy(tpu, zone=None, project=None):
  """TPUStrategy on a TPU, after checking that its workers answer."""
  try:
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(
        tpu=tpu, zone=zone, project=project)
    workers = resolver.cluster_spec().as_dict().get("worker", [])
  except Exception as error:  # the resolver raises many kinds
    raise ValueError(f"--tpu={tpu}: cannot find this TPU "
                     f"({type(error).__name__}: {error})") from None
  for address in workers:
    _check_reachable(tpu, address)
  try:
    tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
  except (tf.errors.OpError, ValueError, RuntimeError) as error:
    raise ValueError(f"--tpu={tpu}: cannot initialise the TPU "
                     f"({type(error).__name__}: {error})") from None
  return tf.distribute.TPUStrategy(resolver)


def _check_reachable(tpu, address):
  """Fails fast when nothing listens at a TPU worker's host:port."""
  parsed = urllib.parse.urlsplit(
      address if "://" in address else f"grpc://{address}")
  try:
    with socket.create_connection((parsed.hostname, parsed.port),
                                  timeout=_CONNECT_TIMEOUT_SECONDS):
      pass
  except OSError as error:
    raise ValueError(f"--tpu={tpu}: cannot reach the TPU worker at "
                     f"{parsed.hostname}:{parsed.port} ({error})") from None


def is_chief(strategy):
  """Whether this process writes checkpoints, summaries and results."""
  return strategy.extended.should_checkpoint


def num_workers(strategy):
  """How many processes feed the strategy (1 unless multi-worker)."""
  resolver = getattr(strategy, "cluster_resolver", None)
  if resolver is None or isinstance(
      resolver, tf.distribute.cluster_resolver.TPUClusterResolver):
    return 1
  cluster = resolver.cluster_spec().as_dict()
  return max(1, len(cluster.get("chief", [])) + len(cluster.get("worker", [])))
