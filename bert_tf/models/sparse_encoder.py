"""BertSparseEncoder: a SPLADE sparse encoder, as sentence-transformers'
SparseEncoder builds one from a BERT: the masked-LM head's logits at every
token, then SpladePooling."""

import keras
import numpy as np
import tensorflow as tf

from bert_tf.checkpoints import sentence_transformers
from bert_tf.layers.masked_lm import MaskedLMHead
from bert_tf.layers.splade_pooling import (SpladePooling, check_splade,
                                           sparse_embeddings)
from bert_tf.models.argument_checks import check_positive_int
from bert_tf.models.pretrainer import BertPretrainer
from bert_tf.models.text_encoding import (TextEncoderModel, checked_prompts,
                                         prompt_text, require_preprocessor,
                                         text_features, text_list)
from bert_tf.objectives.sparse_embedding import (
    SparseMultipleNegativesRankingLoss, SpladeLoss)

# The prompts a sentence-transformers SparseEncoder always has ("" where
# its folder sets none): encode_query's and encode_document's.
QUERY, DOCUMENT = "query", "document"
# How many batches encode sorts by length at a time (Predictor
# .predict_in_order): the dense rows held back are bounded.
_CHUNK_BATCHES = 8


@keras.saving.register_keras_serializable(package="bert_tf")
class BertSparseEncoder(TextEncoderModel):
  """The masked-LM logits of every token, through SpladePooling: one
  weight per vocabulary token, most of them 0 (sentence-transformers'
  SparseEncoder of an MLMTransformer, or a fill-mask Transformer, and
  SpladePooling).

  Args:
    config: a BertConfig (or its dict).
    preprocessor: a BertPreprocessor (see TextModel); encode() needs one.
    pooling_strategy: "max" or "sum" over the tokens
      (layers.splade_pooling.SpladePooling).
    activation: "relu" (log(1 + relu(logit))) or "log1p_relu" (one log1p
      more).
    max_active_dims: encode() keeps each embedding's largest weights, this
      many; None keeps all.
    prompts: {name: text prefixed to a text before it is encoded}; "query"
      and "document" are "" where not given.
    default_prompt_name: the prompt encode() applies unless told otherwise.
    similarity: how embeddings compare, as sentence-transformers'
      similarity_fn_name ("dot" by default).

  Inputs: the encoder's dict, or text; a tuple of k text columns (a
    training batch) embeds each column.

  Outputs: {"embedding": float32 [batch, vocab_size]} ([batch, k,
    vocab_size] for k columns), dense.
  """

  config_arguments = ("pooling_strategy", "activation", "max_active_dims",
                      "prompts", "default_prompt_name", "similarity")
  checkpoint_head_names = {
      name: path for name, path in
      BertPretrainer.checkpoint_head_names.items()
      if name.startswith("cls/predictions/")}
  # Its encoder and head are a BertForMaskedLM; save_pretrained writes them
  # as a sentence-transformers folder, in no other format.
  huggingface_architectures = ("BertForMaskedLM",)
  # No runner trains it.
  objective = None

  def __init__(self, config, *, preprocessor=None, pooling_strategy="max",
               activation="relu", max_active_dims=None, prompts=None,
               default_prompt_name=None, similarity="dot", **kwargs):
    # Checked before the encoder is built.
    name = type(self).__name__
    check_splade(pooling_strategy, activation, name)
    if max_active_dims is not None:
      check_positive_int(max_active_dims, "max_active_dims", name)
    prompts, default_prompt_name = checked_prompts(
        prompts, default_prompt_name, name, (QUERY, DOCUMENT))
    if similarity not in sentence_transformers.SIMILARITIES:
      raise ValueError(f"{name}: similarity={similarity!r}; expected one of "
                       f"{', '.join(sentence_transformers.SIMILARITIES)}")
    super().__init__(config, preprocessor=preprocessor, **kwargs)
    self.splade_pooling = SpladePooling(pooling_strategy, activation,
                                        name="splade_pooling")
    self.pooling_strategy, self.activation = pooling_strategy, activation
    self.max_active_dims = max_active_dims
    self.prompts, self.default_prompt_name = prompts, default_prompt_name
    self.similarity = similarity
    config = self.config
    self.masked_lm_head = MaskedLMHead(
        vocab_size=config.vocab_size, hidden_size=config.hidden_size,
        hidden_act=config.hidden_act,
        initializer_range=config.initializer_range,
        layer_norm_epsilon=config.layer_norm_eps, name="predictions")
    # The pooler is not used: its weights would get no gradient.
    self.encoder.pooler.trainable = False
    self._predictor = None
    self._tokens = None
    self.build()

  def build(self, input_shape=None):
    self.masked_lm_head.build()
    self.built = True

  @property
  def dimension(self):
    """The length of an embedding: the vocabulary's size."""
    return self.config.vocab_size

  def sentence_transformers_pipeline(self):
    """The sentence-transformers modules and settings it is, for
    save_pretrained(format="sentence-transformers")."""
    return sentence_transformers.Pipeline(
        model_type=sentence_transformers.SPARSE_ENCODER, transformer_dir="",
        splade=sentence_transformers.SpladeModule(
            pooling_strategy=self.pooling_strategy,
            activation=self.activation),
        max_active_dims=self.max_active_dims, prompts=dict(self.prompts),
        default_prompt_name=self.default_prompt_name,
        similarity=self.similarity)

  def embed(self, inputs, training=None):
    _, sequence_output, input_mask = self.token_outputs(inputs, training)
    logits = self.masked_lm_head.token_logits(sequence_output,
                                              self.encoder.embedding_table)
    return {"embedding": self.splade_pooling(logits, input_mask)}

  def compile_defaults(self):
    """sentence-transformers' SparseEncoder trainer's default loss, no
    metrics."""
    return SpladeLoss(SparseMultipleNegativesRankingLoss(),
                      document_regularizer_weight=3e-5,
                      query_regularizer_weight=5e-5), None

  def prompt_of(self, prompt_name=None, prompt=None):
    """The text encode() prefixes: `prompt` if given, else the prompt
    named, else the default prompt's, else none (""); "query" and
    "document" are "" where the model has no such prompt."""
    return prompt_text(self, prompt_name, prompt, (QUERY, DOCUMENT))

  def encode(self, texts, batch_size=32, prompt_name=None, prompt=None,
             max_active_dims=None):
    """Sparse embeddings of a list of texts, as sentence-transformers'
    SparseEncoder.encode.

    The texts (each after its prompt, see prompt_of) are tokenised at
    once, sorted by length a few batches at a time, and each batch runs at
    its own length (models.predictor.Predictor).

    Args:
      texts: a list (or any iterable) of str, or of bytes in UTF-8.
      batch_size: the most texts run at once.
      prompt_name, prompt: see prompt_of.
      max_active_dims: keep each embedding's largest weights, this many;
        by default the model's max_active_dims (None: all).

    Returns:
      A tf.SparseTensor [len(texts), vocab_size] float32 of the non-zero
      weights, rows in the texts' order.
    """
    return self._encode(texts, batch_size, prompt_name, prompt,
                        max_active_dims, None)

  def encode_query(self, texts, batch_size=32, prompt_name=None,
                   prompt=None, max_active_dims=None):
    """encode() with the "query" prompt unless another is given (not the
    default prompt), as sentence-transformers' encode_query."""
    if prompt_name is None and prompt is None:
      prompt_name = QUERY
    return self._encode(texts, batch_size, prompt_name, prompt,
                        max_active_dims, QUERY)

  def encode_document(self, texts, batch_size=32, prompt_name=None,
                      prompt=None, max_active_dims=None):
    """encode() with the "document" prompt unless another is given (not
    the default prompt), as sentence-transformers' encode_document."""
    if prompt_name is None and prompt is None:
      prompt_name = DOCUMENT
    return self._encode(texts, batch_size, prompt_name, prompt,
                        max_active_dims, DOCUMENT)

  def _encode(self, texts, batch_size, prompt_name, prompt, max_active_dims,
              task):
    """encode's, for the task (QUERY, DOCUMENT, or None: encode's own)."""
    name = f"{type(self).__name__}.encode"
    require_preprocessor(self, name)
    check_positive_int(batch_size, "batch_size", name)
    if max_active_dims is not None:
      check_positive_int(max_active_dims, "max_active_dims", name)
    else:
      max_active_dims = self.max_active_dims
    texts = text_list(texts, name)
    prefix = self.prompt_of(prompt_name, prompt)
    if not texts:
      return sparse_embeddings(np.zeros((0, self.dimension), np.float32))
    return self._embeddings(texts, prefix, batch_size, max_active_dims, task)

  def _embeddings(self, texts, prefix, batch_size, max_active_dims, task):
    """The sparse embeddings of prefix + each text (at least one), each
    batch run at its own length; one route serves every task."""
    del task
    rows, parts = [], []
    for _, outputs in self._prediction().predict_in_order(
        text_features(self, texts, prefix), batch_size, _CHUNK_BATCHES):
      rows.append(outputs["embedding"])
      if len(rows) == batch_size:
        parts.append(sparse_embeddings(np.stack(rows), max_active_dims))
        rows = []
    if rows:
      parts.append(sparse_embeddings(np.stack(rows), max_active_dims))
    return tf.sparse.concat(0, parts)

  def decode(self, embeddings, top_k=None):
    """(token, weight) pairs of embeddings' non-zero weights, largest
    first, as sentence-transformers' decode: a list of pairs for one
    embedding [vocab_size], a list of those for [n, vocab_size].

    Args:
      embeddings: a tf.SparseTensor (encode's) or a dense array or tensor.
      top_k: the most pairs per embedding; None gives all.
    """
    name = f"{type(self).__name__}.decode"
    if top_k is not None:
      check_positive_int(top_k, "top_k", name)
    ids, weights, rows, one = _nonzero_weights(embeddings,
                                               self.dimension, name)
    tokens = self._vocabulary_tokens(name)
    decoded = []
    for row in range(rows):
      row_weights, row_ids = weights[ids[0] == row], ids[1][ids[0] == row]
      order = np.argsort(-row_weights, kind="stable")[:top_k]
      decoded.append([(tokens.get(token), weight) for token, weight in zip(
          row_ids[order].tolist(), row_weights[order].tolist())])
    return decoded[0] if one else decoded

  def _vocabulary_tokens(self, method_name):
    """{id: token} of the preprocessor's vocabulary, made once."""
    require_preprocessor(self, method_name)
    if self._tokens is None:
      self._tokens = {index: token for token, index in
                      self.preprocessor.tokenizer.vocab.items()}
    return self._tokens


def _nonzero_weights(embeddings, dimension, method_name):
  """(indices [2, n] of (row, token), weights [n], rows, whether it was
  one embedding) of the non-zero weights of sparse or dense embeddings
  [rows, dimension] or [dimension], numpy."""
  if isinstance(embeddings, tf.SparseTensor):
    shape = embeddings.dense_shape.numpy().tolist()
  else:
    try:
      dense = np.asarray(embeddings, np.float32)
    except (TypeError, ValueError):
      raise ValueError(f"{method_name}: embeddings are not an array of "
                       "weights") from None
    shape = list(dense.shape)
  if len(shape) not in (1, 2) or shape[-1] != dimension:
    raise ValueError(f"{method_name}: embeddings are shaped {shape}; "
                     f"expected [n, {dimension}] or [{dimension}]")
  if isinstance(embeddings, tf.SparseTensor):
    indices = embeddings.indices.numpy().T
    weights = embeddings.values.numpy()
  else:
    indices = np.array(np.nonzero(dense))
    weights = dense[tuple(indices)]
  one = len(shape) == 1
  if one:
    indices = np.concatenate([np.zeros_like(indices), indices])
  kept = weights != 0
  return indices[:, kept], weights[kept], 1 if one else shape[0], one
