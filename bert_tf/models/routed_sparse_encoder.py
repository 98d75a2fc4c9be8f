"""BertRoutedSparseEncoder: inference-free SPLADE, as a
sentence-transformers SparseEncoder of a Router builds it: queries through
a per-token weight lookup, documents through the BERT's masked-LM head and
SpladePooling."""

import dataclasses

import keras
import tensorflow as tf

from bert_tf.checkpoints import sentence_transformers
from bert_tf.checkpoints.sentence_transformers.reader import (
    STATIC_QUERY_WEIGHT)
from bert_tf.layers.sparse_static_embedding import SparseStaticEmbedding
from bert_tf.layers.splade_pooling import sparse_embeddings
from bert_tf.models.argument_checks import check_positive_int
from bert_tf.models.sparse_encoder import DOCUMENT, QUERY, BertSparseEncoder

ROUTES = (QUERY, DOCUMENT)


@keras.saving.register_keras_serializable(package="bert_tf")
class BertRoutedSparseEncoder(BertSparseEncoder):
  """A BertSparseEncoder whose queries take a route of their own: each
  token's static weight (sentence-transformers' SparseStaticEmbedding,
  tokenised without [CLS] and [SEP]), where the text holds it.

  Args:
    config, **kwargs: BertSparseEncoder's (its document route).
    query_max_length: the most tokens of a query; None: all.
    default_route: the route encode() takes, "query" or "document"; None:
      encode() refuses (encode_query and encode_document name theirs).

  Calling the model runs the document route.
  """

  config_arguments = (*BertSparseEncoder.config_arguments,
                      "query_max_length", "default_route")
  checkpoint_head_names = {**BertSparseEncoder.checkpoint_head_names,
                           STATIC_QUERY_WEIGHT: "static_query.weight"}

  def __init__(self, config, *, query_max_length=None,
               default_route=DOCUMENT, **kwargs):
    name = type(self).__name__
    if query_max_length is not None:
      check_positive_int(query_max_length, "query_max_length", name)
    if default_route not in (None, *ROUTES):
      raise ValueError(f"{name}: default_route={default_route!r}; expected "
                       f"one of {', '.join(ROUTES)}, or None")
    super().__init__(config, **kwargs)
    self.query_max_length, self.default_route = query_max_length, \
        default_route

  def build(self, input_shape=None):
    # BertSparseEncoder's constructor builds the model: the query route
    # is made here, with the rest.
    self.static_query = SparseStaticEmbedding(self.config.vocab_size,
                                              name="static_query")
    self.static_query.build()
    super().build(input_shape)

  def sentence_transformers_pipeline(self):
    """BertSparseEncoder's, with the Router's query route and settings:
    save_pretrained writes the Router folder sentence-transformers 6
    saves."""
    return dataclasses.replace(
        super().sentence_transformers_pipeline(),
        static_query=sentence_transformers.StaticEmbeddingModule(
            folder="", weights_file="", size=self.config.vocab_size),
        default_route=self.default_route,
        query_max_length=self.query_max_length)

  def _embeddings(self, texts, prefix, batch_size, max_active_dims, task):
    """The task's route: encode's is default_route."""
    route = task or self.default_route
    if route is None:
      raise ValueError(f"{type(self).__name__}.encode: the model has no "
                       f"default route; call encode_query or "
                       f"encode_document")
    if route == DOCUMENT:
      return super()._embeddings(texts, prefix, batch_size, max_active_dims,
                                 task)
    parts = []
    for start in range(0, len(texts), batch_size):
      token_ids = self.preprocessor.tokenizer(tf.constant(
          [prefix + text for text in texts[start:start + batch_size]]))
      if self.query_max_length is not None:
        token_ids = token_ids[:, :self.query_max_length]
      parts.append(sparse_embeddings(self.static_query(token_ids),
                                     max_active_dims))
    return tf.sparse.concat(0, parts)
