"""extract_features: the encoder's chosen layers for every line of a file.

    check every path -> read the lines (text_lines) -> features as the
    original packs them (text_inputs) -> the encoder's layers (Predictor, on
    any strategy, each batch at its own length) -> the original's JSONL
    (output_files, jsonl) or an npz; and with export_dir, a TF Serving
    SavedModel of the same layers (serving)

Everything is checked before the model runs: the output is not an input
nor a directory, --layers exist in the model, the checkpoint is one of this
config. The output is written under a temporary name and renamed when
complete.
"""

import dataclasses
import logging
from typing import Optional

import numpy as np

from bert_tf import option_checks, tokenization
from bert_tf.checkpoints import tf_checkpoints
from bert_tf.data.text_inputs import encode_texts
from bert_tf.features.output_files import write_jsonl, write_npz
from bert_tf.features.serving import feature_serving
from bert_tf.features.text_lines import read_lines
from bert_tf.files import export, output_paths
from bert_tf.layers.layer_combination import check_layers
from bert_tf.models.layer_outputs import LayerOutputs
from bert_tf.text.tokenizer import InGraphTokenizer
from bert_tf.training import precision, run_setup
from bert_tf.training.predictor import Predictor
from bert_tf.training.progress import Progress

logger = logging.getLogger(__name__)

JSONL, NPZ = "jsonl", "npz"
# Lines are sorted by length within chunks of _CHUNK_BATCHES batches, so
# that each batch runs at its own length (batching.bucket_length); a
# chunk's layers are held in memory until written in order.
_CHUNK_BATCHES = 16
# Progress is logged every this many lines.
_LOG_EVERY = 1000


@dataclasses.dataclass
class ExtractionOptions:
  """An extract_features run; each field is the flag of the same name
  (export_text: --export_signatures=all)."""
  input_file: Optional[str]
  output_file: Optional[str]
  init_checkpoint: str
  # None: the model directory's that --init_checkpoint names (run_setup).
  bert_config_file: Optional[str] = None
  vocab_file: Optional[str] = None
  layers: str = "-1,-2,-3,-4"
  max_seq_length: int = 128
  do_lower_case: Optional[bool] = None
  batch_size: int = 32
  output_format: str = JSONL
  use_xla: bool = False
  dtype: str = "float32"
  export_dir: Optional[str] = None
  export_text: bool = True


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
  config = model.config
  layers = parse_layers(options.layers, config.num_hidden_layers)
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
               if example.text_b and options.max_seq_length < 3), None)
  if pair:
    raise ValueError(f"--input_file={options.input_file} line "
                     f"{pair.unique_id + 1}: a pair needs --max_seq_length "
                     f"of at least 3, room for [CLS] and two [SEP]")
  with strategy.scope(), precision.dtype_policy(options.dtype):
    layer_outputs = LayerOutputs(config, layers)
  tf_checkpoints.load_checkpoint(layer_outputs, model.init_checkpoint)
  tokenizer = tokenization.FullTokenizer(model.vocab_file,
                                         model.do_lower_case)
  if examples:
    _extract(options, strategy, layer_outputs, tokenizer, layers, examples)
  if options.export_dir:
    in_graph = InGraphTokenizer(model.vocab_file, model.do_lower_case) \
        if options.export_text else None
    module, signatures = feature_serving(layer_outputs, in_graph,
                                         options.max_seq_length)
    export.write_saved_model(module, options.export_dir, signatures)
  return len(examples or ())


def _extract(options, strategy, model, tokenizer, layers, examples):
  """Writes --output_file: the layers of every line."""
  features = encode_texts(tokenizer, [example.text_a for example in examples],
                          [example.text_b for example in examples],
                          options.max_seq_length)
  features["is_real_example"] = np.ones(len(examples), np.int32)
  logger.info("***** Extracting layers %s of %d lines *****", layers,
              len(examples))
  predictor = Predictor(strategy, model, options.use_xla)
  lines = _logged(_predicted_lines(predictor, features, tokenizer,
                                   len(layers), options.batch_size),
                  len(examples))
  if options.output_format == JSONL:
    write_jsonl(options.output_file, lines, layers)
  else:
    write_npz(options.output_file, lines, layers,
               int(features["input_mask"].sum()), model.config.hidden_size)
  logger.info("Wrote %s for %d lines", options.output_file, len(examples))


def _predicted_lines(predictor, features, tokenizer, num_layers,
                     batch_size):
  """Yields (tokens, float32 [layers, tokens, hidden]) per line, in input
  order."""
  lengths = features["input_mask"].sum(axis=1)
  for index, outputs in predictor.predict_in_order(features, batch_size,
                                                   _CHUNK_BATCHES):
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
