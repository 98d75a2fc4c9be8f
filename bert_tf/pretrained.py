"""Opening a released model directory (bert_config.json, vocab.txt, checkpoint)."""

import dataclasses
import os

import tensorflow as tf

from bert_tf.checkpoints import LoadReport, load_checkpoint
from bert_tf.config import BertConfig
from bert_tf.models.pretrainer import BertPretrainer

CONFIG_FILE = "bert_config.json"
VOCAB_FILE = "vocab.txt"
CHECKPOINT_PREFIX = "bert_model.ckpt"


@dataclasses.dataclass
class PretrainedModel:
  """A released model, opened: its config, the loaded model and its files."""
  config: BertConfig
  model: object
  vocab_file: str
  load_report: LoadReport


def _checkpoint_in(model_dir):
  """bert_model.ckpt as released, else the newest in a `checkpoint` file."""
  released = os.path.join(model_dir, CHECKPOINT_PREFIX)
  if tf.io.gfile.exists(f"{released}.index"):
    return released
  latest = tf.train.latest_checkpoint(model_dir)
  if latest is None:
    raise FileNotFoundError(
        f"{model_dir}: no checkpoint (expected {CHECKPOINT_PREFIX}.index or a "
        f"'checkpoint' index file)")
  return latest


def _count_vocab(vocab_file, config):
  """Checks that every vocabulary id fits the embedding table."""
  if not tf.io.gfile.exists(vocab_file):
    raise FileNotFoundError(f"{vocab_file}: missing; a released model "
                            f"directory has {VOCAB_FILE}")
  with tf.io.gfile.GFile(vocab_file, "r") as reader:
    size = sum(1 for _ in reader)
  if size > config.vocab_size:
    raise ValueError(
        f"{vocab_file}: {size} tokens, but vocab_size in {CONFIG_FILE} is "
        f"{config.vocab_size}; ids past the embedding table cannot be looked up")


def load_pretrained(model_dir, model_class=BertPretrainer):
  """Builds `model_class` from a released model directory and loads its weights.

  Args:
    model_dir: a directory as Google released them (bert_config.json,
      vocab.txt, bert_model.ckpt.*), or one with a `checkpoint` index file.
    model_class: the bert_tf model to build (BertPretrainer, BertEncoder, ...).

  Returns:
    A PretrainedModel.
  """
  config = BertConfig.from_json_file(os.path.join(model_dir, CONFIG_FILE))
  vocab_file = os.path.join(model_dir, VOCAB_FILE)
  _count_vocab(vocab_file, config)
  model = model_class(config)
  report = load_checkpoint(model, _checkpoint_in(model_dir))
  return PretrainedModel(config=config, model=model, vocab_file=vocab_file,
                         load_report=report)
