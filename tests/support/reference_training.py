"""The original_tiny_train settings through bert_tf.training.Trainer.

Imported by the tests, and run as a script by them to train under a
MirroredStrategy over two logical CPU devices, which must be configured
before TensorFlow starts:

    python -m tests.support.reference_training OUTPUT_DIR STRATEGY BATCH_SIZE
"""

import os
import sys

import tensorflow as tf

import bert_tf
from bert_tf.objectives.pretraining import PretrainingObjective
from bert_tf.optimization import optimizers, precision
from bert_tf.pretraining.dataset import pretraining_dataset
from bert_tf.training.trainer import Trainer, TrainingOptions
from tests.support.helpers import ORIGINAL_TINY, ORIGINAL_TINY_TRAIN


def train(output_dir, strategy=None, batch_size=3, num_train_steps=10,
          iterations_per_loop=5, **options):
  """Trains from original_tiny's checkpoint; returns the Trainer. Its loss
  is summarised once per iterations_per_loop steps (1: every step's)."""
  strategy = strategy or tf.distribute.OneDeviceStrategy("/cpu:0")
  options = TrainingOptions(num_train_steps=num_train_steps,
                            save_checkpoints_steps=num_train_steps,
                            iterations_per_loop=iterations_per_loop,
                            **options)
  config = bert_tf.BertConfig.from_json_file(
      os.path.join(ORIGINAL_TINY_TRAIN, "bert_config.json"))
  with strategy.scope(), precision.dtype_policy(options.dtype):
    model = bert_tf.BertPretrainer(config)
    optimizer = optimizers.create_optimizer(1e-3, num_train_steps=10,
                                              num_warmup_steps=2)
  trainer = Trainer(strategy, model, optimizer, PretrainingObjective(),
                    output_dir, options)
  trainer.restore(os.path.join(ORIGINAL_TINY, "bert_model.ckpt"))
  trainer.train(pretraining_dataset(
      [os.path.join(ORIGINAL_TINY_TRAIN, "batch.tfrecord")], 16, 4,
      batch_size, is_training=True, shuffle_buffer_size=0))
  return trainer


def main(output_dir, strategy_name, batch_size):
  cpu = tf.config.list_physical_devices("CPU")[0]
  tf.config.set_logical_device_configuration(
      cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
  strategy = (tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
              if strategy_name == "mirrored"
              else tf.distribute.OneDeviceStrategy("/cpu:0"))
  trainer = train(output_dir, strategy, int(batch_size))
  print(f"replicas={strategy.num_replicas_in_sync}")
  return trainer


if __name__ == "__main__":
  main(*sys.argv[1:])
