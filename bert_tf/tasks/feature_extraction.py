"""extract_features: the encoder's chosen layers for every line of a file.

    check every path -> read the lines (text_lines) -> features as the
    original packs them (text_inputs) -> the encoder's layers (Predictor, on
    any strategy) -> the original's JSONL (features_jsonl) or an npz

Everything is checked before the model runs: the output is not an input
nor a directory, --layers exist in the model, the checkpoint is one of this
config. The output is written under a temporary name and renamed when
complete.
"""

import dataclasses
import logging

import numpy as np

from bert_tf import checkpoints, file_io, output_paths, tokenization
from bert_tf.data import batching
from bert_tf.data.features_jsonl import jsonl_line
from bert_tf.data.text_inputs import encode_texts
from bert_tf.data.text_lines import read_lines
from bert_tf.layers.layer_combination import check_layers, select_layers
from bert_tf.models.encoder import EncoderModel
from bert_tf.training import run_files
from bert_tf.training.predictor import Predictor
from bert_tf.training.progress import Progress

logger = logging.getLogger(__name__)

JSONL, NPZ = "jsonl", "npz"
# Lines predicted at a time (their layers are held in memory together).
_CHUNK_LINES = 1024


@dataclasses.dataclass
class ExtractionOptions:
  """An extract_features run; each field is the flag of the same name."""
  input_file: str
  output_file: str
  bert_config_file: str
  init_checkpoint: str
  vocab_file: str
  layers: str = "-1,-2,-3,-4"
  max_seq_length: int = 128
  do_lower_case: bool = True
  batch_size: int = 32
  output_format: str = JSONL


class LayerOutputs(EncoderModel):
  """The encoder's selected layers: {"layer_output_<k>": [batch, seq,
  hidden]} in `selected_layers` order, as the original's predictions."""

  checkpoint_head_names = {}
  config_arguments = ("selected_layers",)

  def __init__(self, config, selected_layers, **kwargs):
    super().__init__(config, **kwargs)
    self.selected_layers = tuple(selected_layers)
    self.built = True

  def call(self, inputs, training=None):
    chosen = select_layers(self.encoder(inputs, training=False),
                           self.selected_layers)
    return {f"layer_output_{k}": layer for k, layer in enumerate(chosen)}


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
  if options.output_format not in (JSONL, NPZ):
    raise ValueError(f"--output_format={options.output_format}: expected "
                     f"{JSONL} or {NPZ}")
  if options.batch_size < 1:
    raise ValueError(f"--batch_size={options.batch_size}: must be at "
                     f"least 1")
  config = run_files.load_bert_config(options.bert_config_file,
                                      options.max_seq_length)
  layers = parse_layers(options.layers, config.num_hidden_layers)
  file_io.check_input_file("--input_file", options.input_file)
  file_io.check_input_file("--vocab_file", options.vocab_file)
  init_checkpoint = run_files.resolve_init_checkpoint(options.init_checkpoint)
  if init_checkpoint is None:
    raise ValueError("--init_checkpoint is required")
  output_paths.check_outputs(
      outputs=[("--output_file", options.output_file)],
      inputs=[("--input_file", options.input_file),
              ("--vocab_file", options.vocab_file),
              ("--bert_config_file", options.bert_config_file),
              *run_files.checkpoint_inputs(init_checkpoint)])
  examples = read_lines(options.input_file)
  tokenizer = tokenization.FullTokenizer(options.vocab_file,
                                         options.do_lower_case)
  features = encode_texts(tokenizer, [example.text_a for example in examples],
                          [example.text_b for example in examples],
                          options.max_seq_length)
  features["is_real_example"] = np.ones(len(examples), np.int32)
  with strategy.scope():
    model = LayerOutputs(config, layers)
  report = checkpoints.load_checkpoint(model, init_checkpoint)
  if report.not_in_checkpoint:
    raise ValueError(f"--init_checkpoint={init_checkpoint} is not a "
                     f"checkpoint of this --bert_config_file: it lacks "
                     f"{', '.join(report.not_in_checkpoint[:3])}")
  logger.info("***** Extracting layers %s of %d lines *****", layers,
              len(examples))
  predictor = Predictor(strategy, model)
  chunks = _predicted_chunks(predictor, features, tokenizer, len(layers),
                             options.batch_size)
  if options.output_format == JSONL:
    _write_jsonl(options.output_file, chunks, layers, len(examples))
  else:
    _write_npz(options.output_file, chunks, layers)
  logger.info("Wrote %s for %d lines", options.output_file, len(examples))
  return len(examples)


def _predicted_chunks(predictor, features, tokenizer, num_layers,
                      batch_size):
  """(tokens per line, [lines, layers, seq, hidden] values) for
  _CHUNK_LINES lines at a time: memory stays that of one chunk."""
  count = len(features["is_real_example"])
  for start in range(0, count, _CHUNK_LINES):
    chunk = {name: value[start:start + _CHUNK_LINES]
             for name, value in features.items()}
    outputs = predictor.predict(
        batching.feature_dataset(chunk, batch_size, False),
        batching.num_batches(chunk, batch_size))
    values = np.stack([outputs[f"layer_output_{k}"]
                       for k in range(num_layers)], axis=1)
    lengths = chunk["input_mask"].sum(axis=1)
    yield ([tokenizer.convert_ids_to_tokens(ids[:length].tolist())
            for ids, length in zip(chunk["input_ids"], lengths)], values)


def _write_jsonl(path, chunks, layers, count):
  progress = Progress(0, count, 1)
  index = 0
  with file_io.atomic_write(path) as writer:
    for tokens, values in chunks:
      for line_tokens, line_values in zip(tokens, values):
        writer.write(jsonl_line(index, line_tokens, layers,
                                line_values[:, :len(line_tokens)]))
        index += 1
      progress.log(index, {})


def _write_npz(path, chunks, layers):
  """Every line's real tokens, concatenated: tokens [total] (str),
  lengths [lines] (a line's tokens are the next `length` of them), layers
  [k] (the --layers values) and layer_<k> float32 [total, hidden] per
  layer, in --layers order."""
  tokens, lengths, parts = [], [], [[] for _ in layers]
  for chunk_tokens, values in chunks:
    for line_tokens, line_values in zip(chunk_tokens, values):
      tokens += line_tokens
      lengths.append(len(line_tokens))
      for k, part in enumerate(parts):
        part.append(line_values[k, :len(line_tokens)])
  arrays = {"tokens": np.array(tokens), "lengths": np.array(lengths,
                                                            np.int32),
            "layers": np.array(layers, np.int32)}
  for k, part in enumerate(parts):
    arrays[f"layer_{k}"] = np.concatenate(part).astype(np.float32)
  with file_io.atomic_write(path, "wb") as writer:
    np.savez(writer, **arrays)
