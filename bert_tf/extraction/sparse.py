"""extract_features' sparse embeddings: a sentence-transformers
SparseEncoder folder's (SPLADE) non-zero weight per vocabulary token of
each line, as bert_tf.load_pretrained(folder).model.encode(lines) gives
them (a Router's: encode_document's, its document route).

    the options and the folder -> a SparsePlan (sparse_plan) -> its
    BertSparseEncoder, run by extraction as it runs an embedder -> each
    line's max_active_dims largest non-zero weights -> a JSONL of
    {token: weight} or a CSR npz (write_sparse_embeddings); with
    export_dir, a SavedModel of each text's top_k token ids and weights
    (sparse_serving)
"""

import dataclasses
from typing import Optional

import numpy as np
import tensorflow as tf

from bert_tf.extraction.output_files import (JSONL, write_sparse_jsonl,
                                           write_sparse_npz)
from bert_tf.extraction.serving import TextServing, text_signatures
from bert_tf.layers.splade_pooling import top_k_weights
from bert_tf.models.sparse_encoder import DOCUMENT
from bert_tf.tasks.serving import checked_ids
from bert_tf.training import option_checks

# The export's k where neither --top_k nor max_active_dims sets one.
# OpenSearch's sparse_encoding ingest processor and Elasticsearch's
# rank_features and sparse_vector fields store whatever {token: weight}
# map they are given (OpenSearch prunes only where asked, top_k among its
# prune_types): k bounds the response, keeping a document's strongest
# terms; a SPLADE passage's non-zero weights number in the low hundreds.
DEFAULT_TOP_K = 128
# The flags of dense sentence embeddings, refused for a SparseEncoder.
_DENSE_FLAGS = ("pooling", "normalize", "truncate_dim", "precision")
_SPARSE_FLAGS = ("max_active_dims", "top_k")


@dataclasses.dataclass(frozen=True)
class SparsePlan:
  """The sparse embeddings of a SparseEncoder folder that a run writes.

  Attributes:
    folder: the folder (--init_checkpoint).
    max_seq_length: the folder's (ModelDirectory.max_seq_length).
    max_active_dims: each line's most weights written; None: all.
    top_k: the export's k: --top_k, else max_active_dims, else
      DEFAULT_TOP_K.
    prompt_name: the prompt extraction applies: a Router's "document"
      (its document route runs), else None (the default prompt).
  """
  folder: str
  max_seq_length: int
  max_active_dims: Optional[int]
  top_k: int
  prompt_name: Optional[str] = None


def sparse_plan(options, source):
  """The SparsePlan of a SparseEncoder folder's run.

  Raises:
    ValueError: one line naming the flag and the folder: a dense
      embedding's flag (--pooling, --normalize, --truncate_dim,
      --precision), --max_active_dims or --top_k below 1, --top_k without
      --export_dir, a JSONL of a vocabulary that repeats a token.
  """
  for name in _DENSE_FLAGS:
    value = getattr(options, name)
    if value not in (None, "float32"):
      flag = f"--{name}={value}" if name != "normalize" else \
          f"--{'' if value else 'no'}normalize"
      raise ValueError(f"{flag}: applies to dense embeddings; "
                       f"--init_checkpoint={options.init_checkpoint} is a "
                       f"SparseEncoder, one weight per vocabulary token")
  given = [name for name in _SPARSE_FLAGS
           if getattr(options, name) is not None]
  option_checks.check_at_least_one(options, given)
  if options.top_k is not None and not options.export_dir:
    raise ValueError(f"--top_k={options.top_k}: sets the k of the "
                     f"--export_dir export's top-k weights; give "
                     f"--export_dir")
  if options.output_format == JSONL:
    _check_distinct_tokens(source.vocabulary)
  pipeline = source.pipeline
  max_active_dims = options.max_active_dims or pipeline.max_active_dims
  return SparsePlan(
      options.init_checkpoint, source.max_seq_length(), max_active_dims,
      options.top_k or max_active_dims or DEFAULT_TOP_K,
      DOCUMENT if pipeline.static_query is not None else None)


def _check_distinct_tokens(vocabulary):
  """Raises ValueError where the vocabulary repeats a token: the ids it
  has run from 0 with one missing, which {token: weight} cannot name."""
  ids = set(vocabulary.vocab.values())
  unnamed = set(range(max(ids) + 1)) - ids
  if unnamed:
    raise ValueError(f"--output_format=jsonl: {vocabulary.path} repeats a "
                     f"token (id {min(unnamed)} is shadowed), which a "
                     f"line's {{token: weight}} cannot tell apart; use "
                     f"--output_format=npz (token ids)")


def check_no_sparse_flags(options):
  """Raises ValueError naming --max_active_dims or --top_k: they apply to
  a SparseEncoder folder only."""
  for name in _SPARSE_FLAGS:
    if getattr(options, name) is not None:
      raise ValueError(f"--{name}={getattr(options, name)}: applies to a "
                       f"sentence-transformers SparseEncoder folder as "
                       f"--init_checkpoint")


def write_sparse_embeddings(path, output_format, predicted, plan,
                            tokenizer, vocab_size):
  """Writes the non-zero weights of each line's (index, {"embedding":
  [vocab_size]}), in order, its plan.max_active_dims largest (ties to the
  lower token id, as encode keeps them): a JSONL of {token: weight},
  largest first, or a CSR npz (output_files.write_sparse_npz)."""
  lines = (_largest_weights(outputs["embedding"], plan.max_active_dims)
           for _, outputs in predicted)
  if output_format == JSONL:
    write_sparse_jsonl(path, ((tokenizer.convert_ids_to_tokens(
        ids.tolist()), weights) for ids, weights in lines))
  else:
    write_sparse_npz(path, lines, vocab_size)


def _largest_weights(embedding, max_active_dims):
  """(token ids int32, weights float32) of an embedding's non-zero
  weights, largest first (ties: lower id first), at most max_active_dims
  (None: all)."""
  ids = np.flatnonzero(embedding)
  order = np.argsort(-embedding[ids], kind="stable")[:max_active_dims]
  ids = ids[order].astype(np.int32)
  return ids, np.asarray(embedding[ids], np.float32)


class SparseServing(TextServing):
  """A BertSparseEncoder and its tokenizer, for export.

  serving_default(input_ids, input_mask, segment_ids: int32 [batch, seq])
      -> token_ids int32 [batch, k], weights float32 [batch, k]: each
      row's k largest weights, largest first, and their token ids (the
      ids as given: no prompt); k is top_k, at most the vocabulary's size.
      A row with fewer than k non-zero weights ends in weights of 0, whose
      ids are those of the lowest zero-weight tokens: drop them.
  serve_text(text): string [batch] -> the same of the plan's prompt +
      each text, tokenised in the graph and cut at max_seq_length: the
      top k of encode(texts) (a Router's encode_document).
  """

  def __init__(self, model, tokenizer, max_seq_length, plan):
    super().__init__(model, ("token_ids", "weights"), tokenizer,
                     max_seq_length, model.prompt_of(plan.prompt_name))
    self.top_k = plan.top_k

  def predict(self, inputs):
    embedding = self.model(checked_ids(inputs, self.model.config),
                           training=False)["embedding"]
    ids, weights = top_k_weights(embedding, self.top_k)
    return {"token_ids": tf.cast(ids, tf.int32), "weights": weights}


def sparse_serving(model, tokenizer, max_seq_length, plan):
  """(SparseServing, its signatures) for export.write_saved_model;
  without a tokenizer, serving_default alone."""
  serving = SparseServing(model, tokenizer, max_seq_length, plan)
  return serving, text_signatures(serving)
