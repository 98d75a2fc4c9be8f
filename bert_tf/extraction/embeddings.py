"""extract_features' sentence embeddings: one vector per line, the last
layer (sequence_output) pooled as sentence-transformers pools its token
embeddings, through a sentence-transformers folder's Dense modules, and
L2-normalised where asked.

    the options and --init_checkpoint -> an EmbeddingPlan (embedding_plan),
    or None for the original's per-token layers -> its BertEmbedder
    (embedder), run by extraction as it runs the layers -> an npz or a
    JSONL of the embeddings (write_embeddings); with export_dir, a SavedModel
    of the same embedder (embedding_serving)

A sentence-transformers embedder's folder gives by default its own
pipeline, as bert_tf.load_pretrained(folder).model.encode(lines) computes
it: its pooling (include_prompt too), Dense modules, Normalize, max
length, default prompt and truncate_dim. The embeddings are then cut to
truncate_dim and quantized to the run's precision (quantization); int8
and uint8 are calibrated on the whole file's embeddings, held in memory.
"""

import dataclasses
from typing import Optional

import numpy as np
import tensorflow as tf

from bert_tf.checkpoints import sentence_transformers
from bert_tf.checkpoints.model_weights import load_weights
from bert_tf.extraction.output_files import (JSONL, write_embeddings_jsonl,
                                           write_embeddings_npz)
from bert_tf.extraction.quantization import (DTYPES, PRECISIONS,
                                           quantize_embeddings)
from bert_tf.training import option_checks
from bert_tf.extraction.sparse import (SparsePlan, check_no_sparse_flags,
                                       sparse_plan)
from bert_tf.extraction.serving import (TextServing, batch_packed_texts,
                                        text_signatures)
from bert_tf.models import BertEmbedder
from bert_tf.models.load_pretrained import load_pretrained
from bert_tf.tasks.serving import checked_ids

# --pooling's values -> SentencePooling's modes.
POOLINGS = {"cls": "cls", "mean": "mean", "max": "max",
            "mean_sqrt_len": "mean_sqrt_len_tokens",
            "weightedmean": "weightedmean"}
# The precisions calibrated on the file's embeddings.
_CALIBRATED = ("int8", "uint8")


@dataclasses.dataclass(frozen=True)
class EmbeddingPlan:
  """The embeddings a run writes.

  Attributes:
    pooling: SentencePooling's modes.
    normalize: whether each embedding is L2-normalised.
    folder: the sentence-transformers embedder's folder whose pipeline
      (Dense modules, prompts) the embedder is, or None.
    max_seq_length: that folder's (ModelDirectory.max_seq_length),
      the run's unless --max_seq_length is given; None without a folder.
    truncate_dim: the first dimensions written, or None: all.
  """
  pooling: tuple
  normalize: bool
  folder: Optional[str] = None
  max_seq_length: Optional[int] = None
  truncate_dim: Optional[int] = None


def embedding_plan(options, source):
  """The embeddings an extract_features run writes: an EmbeddingPlan, a
  SparsePlan (sparse.sparse_plan) for a SparseEncoder's folder without
  --layers, or None where it writes the original's per-token layers:
  without --pooling and --normalize, except for a sentence-transformers
  embedder's folder without --layers. `source`: the run's opened model
  directory (a ModelDirectory), or None.

  Raises:
    ValueError: one line naming the flags: --layers with --pooling or
      --normalize, either on a CrossEncoder's folder, --normalize alone
      on another model, --pooling whose single mode the folder's Dense
      modules cannot take, --truncate_dim or --precision on the
      per-token output or out of range, a dense embedding's flag on a
      SparseEncoder's folder, --max_active_dims or --top_k on another.
  """
  plan = _plan(options, source)
  if isinstance(plan, SparsePlan):
    return plan
  check_no_sparse_flags(options)
  _check_truncation_and_precision(options, plan, source)
  if plan is None or options.truncate_dim is None:
    return plan
  return dataclasses.replace(plan, truncate_dim=options.truncate_dim)


def _plan(options, source):
  """embedding_plan before --truncate_dim and --precision."""
  chosen = []
  if options.pooling is not None:
    option_checks.check_one_of(options, "pooling", tuple(POOLINGS))
    chosen.append(f"--pooling={options.pooling}")
  if options.normalize is not None:
    chosen.append(f"--{'' if options.normalize else 'no'}normalize")
  pipeline = source.pipeline if source is not None else None
  if pipeline is not None and \
      pipeline.model_type == sentence_transformers.CROSS_ENCODER:
    if chosen:
      raise ValueError(f"{' and '.join(chosen)}: --init_checkpoint="
                       f"{options.init_checkpoint} is a CrossEncoder, which "
                       f"scores pairs of texts; it has no sentence embedding")
    return None
  if options.layers is not None:
    if chosen:
      raise ValueError(f"--layers={options.layers} and {' and '.join(chosen)}"
                       f": --layers chooses the per-token output's layers, "
                       f"--pooling pools the last layer into one vector per "
                       f"line; give one or the other")
    return None
  if pipeline is not None and \
      pipeline.model_type == sentence_transformers.SPARSE_ENCODER:
    return sparse_plan(options, source)
  if pipeline is not None:
    return _folder_plan(options, source)
  if not chosen:
    return None
  if options.pooling is None:
    raise ValueError(f"{chosen[0]} applies to a pooled embedding: give "
                     f"--pooling too (or a sentence-transformers folder as "
                     f"--init_checkpoint)")
  return EmbeddingPlan((POOLINGS[options.pooling],), bool(options.normalize))


def _folder_plan(options, source):
  """The plan of a sentence-transformers embedder's folder: its pipeline,
  its pooling or normalisation replaced by the flags'. Its Dense modules
  stay: they take the pooled vector whatever the mode, as they would
  with the folder's Pooling module set to that mode."""
  pipeline = source.pipeline
  pooling = tuple(pipeline.pooling)
  if options.pooling is not None:
    if pipeline.dense and len(pooling) > 1:
      raise ValueError(
          f"--pooling={options.pooling}: the Dense modules of "
          f"--init_checkpoint={options.init_checkpoint} take its "
          f"{len(pooling)} pooling modes concatenated ({', '.join(pooling)})"
          f", not one mode's vector")
    pooling = (POOLINGS[options.pooling],)
  return EmbeddingPlan(
      pooling, pipeline.normalize if options.normalize is None
      else options.normalize, options.init_checkpoint,
      source.max_seq_length(),
      pipeline.truncated_dimension(source.config.hidden_size))


def _check_truncation_and_precision(options, plan, source):
  """Raises ValueError, naming the flags, where --truncate_dim or
  --precision is given for the per-token output, --truncate_dim is not
  from 1 to the embedding's dimensions, or --precision is not one of
  PRECISIONS or quantizes no output file."""
  option_checks.check_one_of(options, "precision", PRECISIONS)
  given = [f"--{name}={getattr(options, name)}"
           for name in ("truncate_dim", "precision")
           if getattr(options, name) not in (None, "float32")]
  if not given:
    return
  if plan is None:
    raise ValueError(f"{' and '.join(given)}: applies to sentence "
                     "embeddings (--pooling, or a sentence-transformers "
                     "embedder's folder), not the per-token output")
  if options.precision != "float32" and not options.input_file:
    raise ValueError(f"--precision={options.precision}: quantizes the "
                     "embeddings written for --input_file; the export "
                     "serves float32")
  if options.truncate_dim is not None:
    dimension = _dimension(plan, source)
    truncate_dim = options.truncate_dim
    if isinstance(truncate_dim, bool) or not isinstance(truncate_dim, int) \
        or not 1 <= truncate_dim <= dimension:
      raise ValueError(f"--truncate_dim={truncate_dim}: expected 1 to the "
                       f"embedding's {dimension} dimensions")


def _dimension(plan, source):
  """The length of the plan's embeddings, before truncation: a folder's
  last Dense module's, else the pooled vector's."""
  pipeline = source.pipeline if plan.folder is not None else None
  if pipeline is not None and pipeline.dense:
    return pipeline.dense[-1].units
  return source.config.hidden_size * len(plan.pooling)


def embedder(plan, run_model):
  """The plan's BertEmbedder (a SparsePlan's BertSparseEncoder), its
  weights loaded: a folder's as load_pretrained builds it, from the run's
  opened folder (without a preprocessor: extraction tokenises), else the
  encoder of run_model's checkpoint."""
  if isinstance(plan, SparsePlan):
    return load_pretrained(run_model.source, preprocessor=None).model
  arguments = {"pooling": list(plan.pooling), "normalize": plan.normalize,
               "truncate_dim": plan.truncate_dim}
  if plan.folder is not None:
    return load_pretrained(run_model.source, preprocessor=None,
                           **arguments).model
  model = BertEmbedder(run_model.config, **arguments)
  load_weights(model, run_model.source.reader, run_model.source.path)
  return model


def write_embeddings(path, output_format, predicted, count, dimension,
                     precision="float32"):
  """Writes the (index, {"embedding"}) of each line, in order, as the
  output format says: each embedding's first `dimension` values in
  `precision` (quantization.PRECISIONS; int8 and uint8 calibrated on all
  the lines', at least two).

  Raises:
    ValueError: int8 or uint8 for one line, before any line is predicted.
  """
  if precision in _CALIBRATED and count < 2:
    raise ValueError(f"--precision={precision}: calibrated on the file's "
                     "embeddings, which takes at least 2 lines")
  embeddings = (outputs["embedding"][:dimension] for _, outputs in predicted)
  if precision in _CALIBRATED:
    embeddings = quantize_embeddings(np.stack(list(embeddings)), precision)
  elif precision != "float32":
    embeddings = (quantize_embeddings(embedding, precision)
                  for embedding in embeddings)
  if output_format == JSONL:
    write_embeddings_jsonl(path, embeddings)
  else:
    width = -(-dimension // 8) if precision.endswith("binary") else dimension
    write_embeddings_npz(path, embeddings, count, width, DTYPES[precision])


class EmbeddingServing(TextServing):
  """A BertEmbedder and its tokenizer, for export.

  serving_default(input_ids, input_mask, segment_ids: int32 [batch, seq])
      -> embedding float32 [batch, dim] (the ids as given: no prompt), dim
      the embedder's truncate_dim where it has one.
  serve_text(text): string [batch] -> the same of the embedder's default
      prompt + each text, tokenised in the graph and cut at max_seq_length,
      the prompt's tokens pooled as the embedder's include_prompt says:
      what embedder.encode(texts) gives.
  Both serve float32: quantize_embeddings quantizes what they return.
  """

  def __init__(self, model, tokenizer, max_seq_length):
    super().__init__(model, ("embedding",), tokenizer, max_seq_length,
                     model.prompt_of())
    self.dimension = model.embedding_dimension()
    self.prompt_length = None
    if tokenizer is not None:
      prompt_tokens = batch_packed_texts(tokenizer, max_seq_length,
                                         tf.constant([self.prompt]))
      self.prompt_length = model.pooled_prompt_length(
          self.prompt, int(tf.reduce_sum(prompt_tokens["input_mask"])))

  def predict(self, inputs, prompt_length=None):
    """The embeddings of checked ids, the first prompt_length tokens of
    each left out of the pooling where it is given."""
    inputs = checked_ids(inputs, self.model.config)
    if prompt_length is not None:
      inputs["prompt_length"] = tf.fill(tf.shape(inputs["input_ids"])[:1],
                                        prompt_length)
    embedding = self.model(inputs, training=False)["embedding"]
    return {"embedding": embedding[:, :self.dimension]}

  def predict_text(self, text):
    return self.predict(self.packed_text(text), self.prompt_length)


def embedding_serving(model, tokenizer, max_seq_length):
  """(EmbeddingServing, its signatures) for export.write_saved_model;
  without a tokenizer, serving_default alone."""
  serving = EmbeddingServing(model, tokenizer, max_seq_length)
  return serving, text_signatures(serving)
