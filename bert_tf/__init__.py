"""bert_tf: Google's BERT release on TensorFlow 2 / Keras 3, same files, same numbers."""

from bert_tf.checkpoints import (LoadReport, checkpoint_variables,
                                 load_checkpoint, save_checkpoint)
from bert_tf.config import BertConfig
from bert_tf import tokenization
from bert_tf.losses import masked_lm_loss, next_sentence_loss
from bert_tf.models import BertEncoder, BertPretrainer
from bert_tf.pretrained import PretrainedModel, load_pretrained

__version__ = "0.1.0"
