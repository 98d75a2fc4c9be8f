"""Opening a released model directory (bert_config.json, vocab.txt, checkpoint)."""

import dataclasses
import os

import tensorflow as tf

from bert_tf.checkpoints import LoadReport, load_checkpoint
from bert_tf.config import BertConfig
from bert_tf.models.pretrainer import BertPretrainer
from bert_tf.vocabulary import check_vocab_fits

CONFIG_FILE = "bert_config.json"
VOCAB_FILE = "vocab.txt"


@dataclasses.dataclass
class PretrainedModel:
  """A released model, opened: its config, the loaded model and its files."""
  config: BertConfig
  model: object
  vocab_file: str
  load_report: LoadReport


def load_pretrained(model_dir, model_class=BertPretrainer):
  """Builds `model_class` from a released model directory and loads its weights.

  Args:
    model_dir: a directory as Google released them (bert_config.json,
      vocab.txt, bert_model.ckpt.*), or one with a `checkpoint` index file.
    model_class: the bert_tf model to build (BertPretrainer, BertEncoder, ...).

  Returns:
    A PretrainedModel.
  """
  config_file = os.path.join(model_dir, CONFIG_FILE)
  config = BertConfig.from_json_file(config_file)
  vocab_file = os.path.join(model_dir, VOCAB_FILE)
  if not tf.io.gfile.exists(vocab_file):
    raise FileNotFoundError(f"{vocab_file}: missing; a released model "
                            f"directory has {VOCAB_FILE}")
  check_vocab_fits(vocab_file, config.vocab_size, config_file)
  model = model_class(config)
  report = load_checkpoint(model, model_dir)
  return PretrainedModel(config=config, model=model, vocab_file=vocab_file,
                         load_report=report)
