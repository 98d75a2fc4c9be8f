"""Keras 3 building blocks computing what the original modeling.py computes."""

from bert_tf.layers.activations import get_activation
from bert_tf.layers.attention import SelfAttention
from bert_tf.layers.classification_head import ClassificationHead
from bert_tf.layers.embeddings import BertEmbeddings
from bert_tf.layers.masked_lm import MaskedLMHead
from bert_tf.layers.transformer_block import TransformerBlock
