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
it: its pooling, Dense modules, Normalize, max length and default prompt.
"""

import dataclasses
from typing import Optional

import tensorflow as tf

from bert_tf.checkpoints import sentence_transformers
from bert_tf.checkpoints.model_weights import load_weights
from bert_tf.extraction.output_files import (JSONL, write_embeddings_jsonl,
                                           write_embeddings_npz)
from bert_tf.training import option_checks
from bert_tf.extraction.serving import batch_packed_texts
from bert_tf.models import BertEmbedder
from bert_tf.models.load_pretrained import load_pretrained
from bert_tf.tasks.serving import IdsServing, checked_texts, ids_signatures

# --pooling's values -> SentencePooling's modes.
POOLINGS = {"cls": "cls", "mean": "mean", "max": "max",
            "mean_sqrt_len": "mean_sqrt_len_tokens"}


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
  """
  pooling: tuple
  normalize: bool
  folder: Optional[str] = None
  max_seq_length: Optional[int] = None


def embedding_plan(options, source):
  """The embeddings an extract_features run writes, or None where it
  writes the original's per-token layers: without --pooling and
  --normalize, except for a sentence-transformers embedder's folder
  without --layers. `source`: the run's opened model directory
  (a ModelDirectory), or None.

  Raises:
    ValueError: one line naming the flags: --layers with --pooling or
      --normalize, either on a CrossEncoder's folder, --normalize alone
      on another model, or --pooling whose single mode the folder's Dense
      modules cannot take.
  """
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
      source.max_seq_length())


def embedder(plan, run_model):
  """The plan's BertEmbedder, its weights loaded: a folder's as
  load_pretrained builds it, from the run's opened folder (without a
  preprocessor: extraction tokenises), else the encoder of run_model's
  checkpoint."""
  arguments = {"pooling": list(plan.pooling), "normalize": plan.normalize}
  if plan.folder is not None:
    return load_pretrained(run_model.source, preprocessor=None,
                           **arguments).model
  model = BertEmbedder(run_model.config, **arguments)
  load_weights(model, run_model.source.reader, run_model.source.path)
  return model


def write_embeddings(path, output_format, predicted, count, dimension):
  """Writes the (index, {"embedding"}) of each line, in order, as the
  output format says."""
  embeddings = (outputs["embedding"] for _, outputs in predicted)
  if output_format == JSONL:
    write_embeddings_jsonl(path, embeddings)
  else:
    write_embeddings_npz(path, embeddings, count, dimension)


class EmbeddingServing(IdsServing):
  """A BertEmbedder and its tokenizer, for export.

  serving_default(input_ids, input_mask, segment_ids: int32 [batch, seq])
      -> embedding float32 [batch, dim] (the ids as given: no prompt).
  serve_text(text): string [batch] -> the same of the embedder's default
      prompt + each text, tokenised in the graph and cut at max_seq_length:
      what embedder.encode(texts) gives.
  """

  def __init__(self, model, tokenizer, max_seq_length):
    super().__init__(model, ("embedding",))
    self.tokenizer = tokenizer
    self.max_seq_length = max_seq_length
    self.prompt = model.prompt_of()

  def predict_text(self, text):
    return self.predict(batch_packed_texts(
        self.tokenizer, self.max_seq_length,
        tf.strings.join([self.prompt, text])))


def embedding_serving(model, tokenizer, max_seq_length):
  """(EmbeddingServing, its signatures) for export.write_saved_model;
  without a tokenizer, serving_default alone."""
  serving = EmbeddingServing(model, tokenizer, max_seq_length)
  signatures = ids_signatures(serving)
  if tokenizer is not None:

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def serve_text(text):
      return serving.predict_text(**checked_texts({"text": text}))

    signatures["serve_text"] = serve_text
  return serving, signatures
