"""BERT models: the encoder and the models built on it."""

from bert_tf.models.classifier import (BertClassifier,
                                      BertNextSentenceClassifier)
from bert_tf.models.embedder import BertEmbedder
from bert_tf.models.encoder import BertEncoder
from bert_tf.models.pretrainer import BertPretrainer
from bert_tf.models.sparse_encoder import BertSparseEncoder
from bert_tf.models.routed_sparse_encoder import BertRoutedSparseEncoder
from bert_tf.models.span_labeler import BertSpanLabeler
from bert_tf.models.feature_tagger import BertFeatureTagger
from bert_tf.models.tagger import BertTagger
from bert_tf.models.multiple_choice import BertMultipleChoice
