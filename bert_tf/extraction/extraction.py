"""extract_features: the encoder's chosen layers for every line of a file.

    check every path -> read the lines (text_lines) -> features as the
    original packs them (text_inputs) -> the encoder's layers (Predictor, on
    any strategy, each batch at its own length) -> the original's JSONL
    (output_files, jsonl) or an npz; and with export_dir, a TF Serving
    SavedModel of the same layers (serving)

With --pooling, or for a sentence-transformers embedder's folder, each
line's sentence embedding instead (embeddings: the same path, a
BertEmbedder in place of the layers).

Everything is checked before the model runs: the output is not an input
nor a directory, --layers exist in the model, the checkpoint is one of this
config. The output is written under a temporary name and renamed when
complete.
"""

import dataclasses
import logging
from typing import Optional

import numpy as np

from bert_tf import tokenization
from bert_tf.checkpoints.model_weights import load_weights
from bert_tf.data.text_inputs import encode_texts
from bert_tf.extraction.embeddings import (embedder, embedding_plan,
                                         embedding_serving, write_embeddings)
from bert_tf.training import option_checks
from bert_tf.extraction.output_files import JSONL, NPZ, write_jsonl, write_npz
from bert_tf.extraction.serving import feature_serving
from bert_tf.extraction.text_lines import read_lines
from bert_tf.files import export, output_paths
from bert_tf.layers.layer_combination import check_layers
from bert_tf.models.layer_outputs import LayerOutputs
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


def extract_features(options, strategy):
  """Runs extract_features as the options say; returns the line count.

  Raises:
    ValueError: a bad option, input file or checkpoint, named.
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
  config = model.config
  layers = None if plan else parse_layers(
      DEFAULT_LAYERS if options.layers is None else options.layers,
      config.num_hidden_layers)
  if bool(options.input_file) != bool(options.output_file) or not (
      options.input_file or options.export_dir):
    raise ValueError("--input_file and --output_file are required (or "
                     "--export_dir alone, to export the model only)")
  output_paths.check_outputs(
      outputs=[("--output_file", options.output_file)]
      if options.output_file else [],
      inputs=[*([("--input_file", options.input_file)]
                if options.input_file else []),
              *model.input_files()],
      output_dirs=[("--export_dir", options.export_dir)]
      if options.export_dir else [])
  examples = read_lines(options.input_file) if options.input_file else None
  if examples == []:
    raise ValueError(f"--input_file={options.input_file} is empty: no "
                     f"lines to extract features of")
  pair = next((example for example in examples or ()
               if example.text_b and max_seq_length < 3), None)
  if pair:
    raise ValueError(f"--input_file={options.input_file} line "
                     f"{pair.unique_id + 1}: a pair needs --max_seq_length "
                     f"of at least 3, room for [CLS] and two [SEP]")
  with strategy.scope(), precision.dtype_policy(options.dtype):
    network = embedder(plan, model) if plan else LayerOutputs(config, layers)
  if not plan:
    load_weights(network, model.source.reader, model.source.path)
  tokenizer = tokenization.FullTokenizer(model.vocabulary,
                                         model.do_lower_case)
  if examples:
    _extract(options, strategy, network, tokenizer, layers, examples,
             max_seq_length)
  if options.export_dir:
    in_graph = InGraphTokenizer(model.vocabulary, model.do_lower_case) \
        if options.export_text else None
    serving = embedding_serving if plan else feature_serving
    module, signatures = serving(network, in_graph, max_seq_length)
    export.write_saved_model(module, options.export_dir, signatures)
  return len(examples or ())


def _extract(options, strategy, model, tokenizer, layers, examples,
             max_seq_length):
  """Writes --output_file: the layers of every line, or (layers None,
  model a BertEmbedder) its embedding, of the embedder's default prompt +
  its text."""
  prompt = model.prompt_of() if layers is None else ""
  features = encode_texts(
      tokenizer, [prompt + example.text_a for example in examples],
      [example.text_b for example in examples], max_seq_length)
  features["is_real_example"] = np.ones(len(examples), np.int32)
  logger.info("***** Extracting %s of %d lines *****",
              f"layers {layers}" if layers else "embeddings", len(examples))
  predicted = _logged(Predictor(strategy, model, options.use_xla)
                      .predict_in_order(features, options.batch_size,
                                        _CHUNK_BATCHES), len(examples))
  if layers is None:
    write_embeddings(options.output_file, options.output_format, predicted,
                     len(examples), model.dimension)
  elif options.output_format == JSONL:
    write_jsonl(options.output_file, _layer_lines(
        predicted, features, tokenizer, len(layers)), layers)
  else:
    write_npz(options.output_file, _layer_lines(
        predicted, features, tokenizer, len(layers)), layers,
              int(features["input_mask"].sum()), model.config.hidden_size)
  logger.info("Wrote %s for %d lines", options.output_file, len(examples))


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
