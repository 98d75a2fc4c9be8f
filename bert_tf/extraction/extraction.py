"""extract_features: the encoder's chosen layers for every line of a file.

    check every path -> read the lines (text_lines) -> features as the
    original packs them (text_inputs; a sentence-transformers folder's as
    its encode does, packing.packed_texts) -> the encoder's layers
    (Predictor, on any strategy, each batch at its own length) -> the
    original's JSONL (output_files, jsonl) or an npz; and with export_dir,
    a TF Serving SavedModel of the same layers (serving)

With --pooling, or for a sentence-transformers embedder's folder, each
line's sentence embedding instead (embeddings: the same path, a
BertEmbedder in place of the layers); for a SparseEncoder's folder, each
line's non-zero weight per vocabulary token (sparse: a BertSparseEncoder).

Everything is checked before the model runs: the output is not an input
nor a directory, --layers exist in the model, the checkpoint is one of this
config. The output is written under a temporary name and renamed when
complete.

One file's output is a FileExtractor's, built once per model: this
module's extract_features runs one on --input_file, and each worker of the
Beam pipeline (beam_pipeline) one on each of its files, so that both write
the same bytes, whatever the output.
"""

import dataclasses
import logging
from typing import Optional

import numpy as np
import tensorflow as tf

from bert_tf import tokenization
from bert_tf.checkpoints.model_weights import load_weights
from bert_tf.data.text_inputs import encode_texts
from bert_tf.extraction.embeddings import (EmbeddingPlan, embedder,
                                         embedding_plan, embedding_serving,
                                         write_embeddings)
from bert_tf.training import option_checks
from bert_tf.extraction.output_files import JSONL, NPZ, write_jsonl, write_npz
from bert_tf.extraction.serving import feature_serving
from bert_tf.extraction.sparse import (SparsePlan, sparse_serving,
                                       write_sparse_embeddings)
from bert_tf.extraction.text_lines import read_lines
from bert_tf.files import export, output_paths
from bert_tf.layers.layer_combination import check_layers
from bert_tf.models.layer_outputs import LayerOutputs
from bert_tf.models.base import ENCODER_INPUTS
from bert_tf.text.packing import packed_texts
from bert_tf.text.tokenizer import InGraphTokenizer
from bert_tf.optimization import precision
from bert_tf.runs import run_setup
from bert_tf.models.predictor import Predictor
from bert_tf.training.progress import Progress

logger = logging.getLogger(__name__)

DEFAULT_LAYERS = "-1,-2,-3,-4"
DEFAULT_MAX_SEQ_LENGTH = 128
# Lines are sorted by length within chunks of _CHUNK_BATCHES batches, so
# that each batch runs at its own length (batching.bucket_length); a
# chunk's layers are held in memory until written in order.
_CHUNK_BATCHES = 16
# Progress is logged every this many lines.
_LOG_EVERY = 1000


@dataclasses.dataclass
class ExtractionOptions:
  """An extract_features run; each field is the flag of the same name
  (export_text: --export_signatures=all), None where the flag is not
  given."""
  input_file: Optional[str]
  output_file: Optional[str]
  init_checkpoint: str
  # None: the model directory's that --init_checkpoint names (run_setup).
  bert_config_file: Optional[str] = None
  vocab_file: Optional[str] = None
  # None: DEFAULT_LAYERS, for the per-token output.
  layers: Optional[str] = None
  # None: DEFAULT_MAX_SEQ_LENGTH, or a sentence-transformers folder's own.
  max_seq_length: Optional[int] = None
  do_lower_case: Optional[bool] = None
  batch_size: int = 32
  output_format: str = JSONL
  use_xla: bool = False
  dtype: str = "float32"
  export_dir: Optional[str] = None
  export_text: bool = True
  # embeddings.POOLINGS' names; None: per-token output, or a folder's own.
  pooling: Optional[str] = None
  normalize: Optional[bool] = None
  # None: all the embedding's dimensions, or a folder's truncate_dim.
  truncate_dim: Optional[int] = None
  # quantization.PRECISIONS' names, for sentence embeddings.
  precision: str = "float32"
  # A SparseEncoder's: None, the folder's max_active_dims, and the
  # export's k (sparse.SparsePlan).
  max_active_dims: Optional[int] = None
  top_k: Optional[int] = None


def parse_layers(text, num_layers):
  """--layers ("-1,-2") as ints the model has.

  Raises:
    ValueError: naming the flag and the bad value.
  """
  try:
    layers = [int(part) for part in text.split(",")]
  except ValueError:
    raise ValueError(f"--layers={text}: expected comma-separated layer "
                     f"indexes such as -1,-2,-3,-4") from None
  check_layers(layers, num_layers, f"--layers={text}")
  return layers


@dataclasses.dataclass
class ExtractionModel:
  """The run's model and what it extracts, checked before any work: the
  resolved model (run_setup), its EmbeddingPlan or SparsePlan (None: the
  per-token layers), the per-token output's layers and the max length."""
  model: run_setup.RunModel
  plan: Optional[EmbeddingPlan]
  layers: Optional[list]
  max_seq_length: int


def check_extraction_model(options):
  """The run's model, every option about it checked.

  Raises:
    ValueError: a bad option or checkpoint, named.
  """
  option_checks.check_one_of(options, "output_format", (JSONL, NPZ))
  option_checks.check_at_least_one(options, ("batch_size",))
  if not options.init_checkpoint:
    raise ValueError("--init_checkpoint is required")
  model = run_setup.resolve_run_model(
      options.init_checkpoint, options.bert_config_file, options.vocab_file,
      options.do_lower_case, options.max_seq_length)
  plan = embedding_plan(options, model.source)
  max_seq_length = options.max_seq_length
  if max_seq_length is None:
    max_seq_length = (plan and plan.max_seq_length) or DEFAULT_MAX_SEQ_LENGTH
    run_setup.check_max_seq_length(max_seq_length, model.config,
                                   model.config_file)
  layers = None if plan else parse_layers(
      DEFAULT_LAYERS if options.layers is None else options.layers,
      model.config.num_hidden_layers)
  return ExtractionModel(model, plan, layers, max_seq_length)


def extract_features(options, strategy):
  """Runs extract_features as the options say; returns the line count.

  Raises:
    ValueError: a bad option, input file or checkpoint, named.
  """
  run = check_extraction_model(options)
  if bool(options.input_file) != bool(options.output_file) or not (
      options.input_file or options.export_dir):
    raise ValueError("--input_file and --output_file are required (or "
                     "--export_dir alone, to export the model only)")
  output_paths.check_outputs(
      outputs=[("--output_file", options.output_file)]
      if options.output_file else [],
      inputs=[*([("--input_file", options.input_file)]
                if options.input_file else []),
              *run.model.input_files()],
      output_dirs=[("--export_dir", options.export_dir)]
      if options.export_dir else [])
  examples = read_examples(options.input_file, run.max_seq_length) \
      if options.input_file else None
  extractor = FileExtractor(options, strategy, run)
  if examples:
    extractor.write(examples, options.output_file)
  if options.export_dir:
    model = run.model
    in_graph = (extractor.folder_tokenizer or InGraphTokenizer(
        model.vocabulary, model.do_lower_case)) \
        if options.export_text else None
    if isinstance(run.plan, SparsePlan):
      module, signatures = sparse_serving(extractor.network, in_graph,
                                          run.max_seq_length, run.plan)
    else:
      serving = embedding_serving if run.plan else feature_serving
      module, signatures = serving(extractor.network, in_graph,
                                   run.max_seq_length)
    export.write_saved_model(module, options.export_dir, signatures)
  return len(examples or ())


def read_examples(input_file, max_seq_length):
  """The lines of input_file, checked for a run at max_seq_length.

  Raises:
    ValueError: the file is missing, not UTF-8, empty, or holds a pair
      that does not fit; naming it.
  """
  examples = read_lines(input_file)
  if not examples:
    raise ValueError(f"--input_file={input_file} is empty: no lines to "
                     f"extract features of")
  pair = next((example for example in examples
               if example.text_b and max_seq_length < 3), None)
  if pair:
    raise ValueError(f"--input_file={input_file} line "
                     f"{pair.unique_id + 1}: a pair needs --max_seq_length "
                     f"of at least 3, room for [CLS] and two [SEP]")
  return examples


class FileExtractor:
  """A run's model, built once, writing the output of one file's lines per
  call: extract_features' --output_file, and each file's output on Beam's
  workers (extraction.beam_pipeline), so that both write the same bytes."""

  def __init__(self, options, strategy, run):
    model, self.layers, self.plan = run.model, run.layers, run.plan
    with strategy.scope(), precision.dtype_policy(options.dtype):
      self.network = embedder(run.plan, model) if run.plan else \
          LayerOutputs(model.config, self.layers)
    if not run.plan:
      load_weights(self.network, model.source.reader, model.source.path)
    self.tokenizer = tokenization.FullTokenizer(model.vocabulary,
                                                model.do_lower_case)
    # A sentence-transformers folder's lines are tokenised as its encode
    # tokenises them: by transformers' rules, in the graph.
    self.folder_tokenizer = None
    if run.plan is not None and run.plan.folder is not None:
      self.folder_tokenizer = InGraphTokenizer(
          model.vocabulary, model.do_lower_case,
          model.source.tokenization_rules)
    self.options = options
    self.max_seq_length = run.max_seq_length
    # Made once: it holds the traced function every file runs.
    self.predictor = Predictor(strategy, self.network, options.use_xla)

  def extract_file(self, input_file, output_file):
    """Writes output_file from input_file's lines; returns their count.

    Raises:
      ValueError: input_file cannot be extracted (read_examples).
    """
    examples = read_examples(input_file, self.max_seq_length)
    self.write(examples, output_file)
    return len(examples)

  def _packed(self, texts_a, texts_b):
    """The encoder's features of the texts (a text_b None: a single
    text), packed as the model's tokenizer packs them: a
    sentence-transformers folder's by transformers' rules, else the
    original's."""
    if self.folder_tokenizer is None:
      return encode_texts(self.tokenizer, texts_a, texts_b,
                          self.max_seq_length)
    return _packed_in_graph(self.folder_tokenizer, texts_a, texts_b,
                            self.max_seq_length)

  def write(self, examples, output_file):
    """Writes output_file: the layers of every line, or (layers None,
    the network a BertEmbedder) its embedding, of the embedder's default
    prompt + its text, or (a SparsePlan) its sparse embedding, of the
    plan's prompt + its text."""
    model, layers, options = self.network, self.layers, self.options
    sparse = isinstance(self.plan, SparsePlan)
    if layers is not None:
      prompt = ""
    else:
      prompt = model.prompt_of(self.plan.prompt_name if sparse else None)
    texts_a = [prompt + example.text_a for example in examples]
    texts_b = [example.text_b for example in examples]
    features = self._packed(texts_a, texts_b)
    features["is_real_example"] = np.ones(len(examples), np.int32)
    if layers is None and not sparse:
      # The tokens the embedder's pooling leaves out: the prompt's, packed
      # alone as the lines are.
      prompt_length = model.pooled_prompt_length(prompt, int(
          self._packed([prompt], [None])["input_mask"].sum()))
      if prompt_length is not None:
        features["prompt_length"] = np.full(len(examples), prompt_length,
                                            np.int32)
    logger.info("***** Extracting %s of %d lines *****",
                f"layers {layers}" if layers else "embeddings",
                len(examples))
    predicted = _logged(self.predictor.predict_in_order(
        features, options.batch_size, _CHUNK_BATCHES), len(examples))
    if sparse:
      write_sparse_embeddings(output_file, options.output_format, predicted,
                              self.plan, self.tokenizer,
                              model.config.vocab_size)
    elif layers is None:
      write_embeddings(output_file, options.output_format, predicted,
                       len(examples), model.embedding_dimension(),
                       options.precision)
    elif options.output_format == JSONL:
      write_jsonl(output_file, _layer_lines(
          predicted, features, self.tokenizer, len(layers)), layers)
    else:
      write_npz(output_file, _layer_lines(
          predicted, features, self.tokenizer, len(layers)), layers,
                int(features["input_mask"].sum()), model.config.hidden_size)
    logger.info("Wrote %s for %d lines", output_file, len(examples))


def _packed_in_graph(tokenizer, texts_a, texts_b, max_seq_length):
  """encode_texts' features of the texts (a text_b None: a single text),
  tokenised and packed by an InGraphTokenizer's rules (packed_texts)."""
  features = {name: np.zeros((len(texts_a), max_seq_length), np.int32)
              for name in ENCODER_INPUTS}
  singles = [row for row, text_b in enumerate(texts_b) if text_b is None]
  pairs = [row for row, text_b in enumerate(texts_b) if text_b is not None]
  for rows, text_b in ((singles, None), (pairs, [texts_b[row]
                                                 for row in pairs])):
    if rows:
      packed = packed_texts(
          tokenizer, max_seq_length, tf.constant([texts_a[row]
                                                  for row in rows]),
          None if text_b is None else tf.constant(text_b))
      for name in ENCODER_INPUTS:
        features[name][rows] = packed[name].numpy()
  return features


def _layer_lines(predicted, features, tokenizer, num_layers):
  """Yields (tokens, float32 [layers, tokens, hidden]) per line of the
  predicted (index, outputs), in input order."""
  lengths = features["input_mask"].sum(axis=1)
  for index, outputs in predicted:
    length = lengths[index]
    yield (tokenizer.convert_ids_to_tokens(
        features["input_ids"][index, :length].tolist()),
           np.stack([outputs[f"layer_output_{k}"][:length]
                     for k in range(num_layers)]))


def _logged(lines, count):
  """The lines, logging progress (lines/sec, ETA) as they pass."""
  progress = Progress(0, count, 1)
  for index, line in enumerate(lines, 1):
    yield line
    if index % _LOG_EVERY == 0 or index == count:
      progress.log(index, {})
