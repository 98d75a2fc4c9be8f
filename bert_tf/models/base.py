"""What every bert_tf model adds to keras.Model: a config of its
BertConfig, quantize() limited to what keeps the outputs right and saved
with the model, weights saved with the layer count they are of,
fit/evaluate/predict that refuse, clearly and before any step, inputs and
targets the model cannot take (FitModel, fit_model.py), and export() with
the model's own inputs."""

import functools
import gc

import keras
import numpy as np
import tensorflow as tf

from bert_tf.models import fit_inputs
from bert_tf.models import keras_file_sizes
from bert_tf.models import lora as lora_adapters
from bert_tf.models.argument_checks import (check_lora_config,
                                            check_positive_int)
from bert_tf.models.fit_model import FitModel
from bert_tf.optimization import precision

# Measured on a classifier fine-tuned on SST-2 (benchmarks/quantization.py,
# docs/keras.md): each keeps over 99.7% of the float model's predictions.
# GPTQ and AWQ are refused: they need calibration data and a description of
# the model's blocks (get_quantization_layer_structure) that bert_tf does
# not give.
QUANTIZATION_MODES = ("int8", "int4", "float8")
# The export formats whose converters fail on a mode's kernels, and what
# to export instead: LiteRT's converter rejects int8 and float8 matmuls,
# tf2onnx has no float8 type (tests/models/test_quantization.py).
_NOT_EXPORTED = {
    ("litert", "int8"): "export the float model with LiteRT's own int8 "
                        "(optimizations=[tf.lite.Optimize.DEFAULT])",
    ("litert", "float8"): "export the float model",
    ("onnx", "float8"): "export the float model, or quantize to int8"}

ENCODER_INPUTS = ("input_ids", "input_mask", "segment_ids")


def _is_dense(layer):
  return isinstance(layer, keras.layers.Dense)


def check_quantization_mode(model_name, mode, config):
  """Raises ValueError unless quantize(mode, config) asks for one of
  QUANTIZATION_MODES (config: a QuantizationConfig, or a mode's name, as
  Keras takes it)."""
  config_mode = config if isinstance(config, str) else getattr(
      config, "mode", None)
  for asked in (mode, config_mode):
    if asked is not None and asked not in QUANTIZATION_MODES:
      raise ValueError(
          f"{model_name}.quantize({asked!r}): bert_tf models support "
          f"{', '.join(map(repr, QUANTIZATION_MODES))}")


def flat_outputs(outputs):
  """A model's output dict with each list (the encoder's
  all_encoder_layers) as one entry per item, "<name>_<index>": ONNX and
  LiteRT name each output, and a list has no name."""
  flat = {}
  for name, value in outputs.items():
    if isinstance(value, (list, tuple)):
      flat.update({f"{name}_{index}": item for index, item in enumerate(value)})
    else:
      flat[name] = value
  return flat


class _FlatOutputs(keras.Model):
  """A model called in inference mode, its outputs flattened."""

  def __init__(self, model):
    super().__init__(name=model.name)
    self.model = model
    self.built = True

  def call(self, inputs):
    return flat_outputs(self.model(inputs, training=False))


class BertKerasModel(FitModel):
  """A keras.Model (a FitModel: compile() with the task's defaults, fit,
  evaluate and predict that check their inputs) built from a BertConfig
  (`self.config`, stored by get_config), whose quantize() covers its Dense
  layers (the attention projections, the feed-forward layers, the pooler,
  the masked-LM transform) and refuses GPTQ and AWQ, and whose export()
  needs no input signature.

  Word embeddings stay float: the masked-LM head multiplies by the same
  table. So do the classification heads, whose weights keep the original's
  [num_classes, width] layout.
  """

  # int32 ids of rank 2 ([batch_size, seq_length]) for each name.
  input_ranks = {name: 2 for name in ENCODER_INPUTS}

  # The transformers classes the model is (pretrained.MODEL_CLASSES is made
  # from them), the one save_pretrained writes by default first; none:
  # save_pretrained refuses.
  huggingface_architectures = ()

  # enable_lora's arguments ({"rank", "targets", "alpha"}), kept in
  # get_config so that from_config adds the same adapters; None: none.
  lora = None

  # The paths of the weights that the last load_checkpoint left at their
  # initialisation, the checkpoint lacking them (a BertForMaskedLM folder's
  # pooler): enable_lora leaves them trainable, to train with the head (a
  # .keras config's lora keeps them as "new_weights").
  new_weights = ()

  # The mode quantize() was given, kept in get_config: from_config
  # quantizes the new model the same way, so that a .keras file's quantized
  # weights find the variables they were saved from.
  quantized_to = None

  def __init__(self, dtype=None, **kwargs):
    if dtype is not None and keras.dtype_policies.get(dtype).name != \
        keras.config.dtype_policy().name:
      # Keras' layers take the global policy when they are made, not their
      # model's: the model's would be the outer layer's alone.
      raise ValueError(
          f"{type(self).__name__}: dtype={dtype!r} is not the global dtype "
          f"policy; use {type(self).__name__}.built_in(dtype, ...) or "
          f"from_pretrained(..., dtype={dtype!r})")
    super().__init__(dtype=dtype, **kwargs)
    precision.warn_if_emulated(self.compute_dtype)

  @classmethod
  def built_in(cls, dtype, *args, **kwargs):
    """cls(*args, **kwargs) with every layer in the dtype policy `dtype`
    ("bfloat16": bfloat16 weights and computation; "mixed_bfloat16":
    float32 weights, bfloat16 computation; None: the global policy)."""
    with precision.keras_policy(dtype):
      return cls(*args, dtype=dtype, **kwargs)

  def __new__(cls, *args, **kwargs):
    model = super().__new__(cls, *args, **kwargs)
    # Keras' Layer.__new__ wraps each instance's quantize in one that
    # resolves the mode before any method of the class runs: it answers
    # "int16", or "gptq" without a GPTQConfig, itself, and lets a string
    # config replace any mode. bert_tf's refusal wraps that wrapper: in
    # quantize or _check_quantize_args, 150 of 187 calls of every Keras
    # mode and junk get Keras' answer, and 13 junk modes quantize.
    keras_quantize = model.quantize

    @functools.wraps(keras_quantize)
    def quantize(mode=None, config=None, **quantize_kwargs):
      check_quantization_mode(cls.__name__, mode, config)
      return keras_quantize(mode, config=config, **quantize_kwargs)

    model.quantize = quantize
    return model

  def input_signature(self):
    """[{name: TensorSpec}]: the inputs export() gives the model."""
    return self.ids_input_signature()

  def ids_input_signature(self):
    """[{name: TensorSpec}]: the model's ids (int32, [batch, seq_length]
    each), which a raw-text model takes too."""
    return [{name: tf.TensorSpec([None] * rank, tf.int32, name=name)
             for name, rank in self.input_ranks.items()}]

  def quantize(self, mode=None, config=None, filters=None, **kwargs):
    if self.lora is not None:
      raise ValueError(f"{type(self).__name__}.quantize: it has LoRA "
                       "adapters; quantize model.merge_lora()")
    if filters is not None:  # a .keras file's quantized_to quantizes all
      raise ValueError(f"{type(self).__name__}.quantize: filters="
                       f"{filters!r}; bert_tf quantizes every Dense layer")
    # Keras collects garbage after each kernel it replaces (Layer.
    # __delattr__), walking the whole heap once per Dense layer; frozen, the
    # objects made before are left out of those walks, and one collection
    # after does what they were for (freeing what held the old kernels).
    gc.freeze()
    try:
      super().quantize(mode, config=config, filters=_is_dense, **kwargs)
    finally:
      gc.unfreeze()
    gc.collect()
    self.quantized_to = mode

  def enable_lora(self, rank, targets=("query", "value"), alpha=None):
    """Adds LoRA adapters of rank `rank` to the encoder's Dense layers that
    `targets` names in every transformer block (lora.TARGETS: "query",
    "key", "value", "attention_output", "intermediate", "output"; one name
    or several), scaled by alpha / rank (alpha: rank by default), and
    freezes the rest of the encoder: the adapters, the task head and any
    encoder weight the checkpoint lacked (a pooler) train (summary() counts
    them). Everything is checked before anything changes. A model already
    compiled is compiled again as it was (an optimizer that has run starts
    again, since its slots are of the weights before), so that the next
    fit, evaluate and predict use the adapters. A .keras file keeps the
    adapters; save_pretrained, save_checkpoint and export write them merged
    into the kernels (merge_lora)."""
    check_positive_int(rank, "rank", f"{type(self).__name__}.enable_lora")
    # The adapters, and an optimizer, in the strategy the model was built in.
    with self.distribute_strategy.scope():
      self.lora = lora_adapters.enable(self, rank, targets, alpha)
      self._retrace()

  def merge_lora(self):
    """A copy of this model with its adapters merged into the kernels: the
    same outputs from plain weights (itself where it has none)."""
    return self if self.lora is None else lora_adapters.merged(self)

  # A bert_tf model has no variables of its own (its layers hold them). It
  # saves its encoder's layer count instead: Keras loads the layers a config
  # builds and ignores any others in the file, so a config of fewer layers
  # than the weights would load silently. from_config checks a file's own
  # model before building it (keras_file_sizes); this holds for a model
  # inside another one. The model loaded is checked once; a model inside it
  # may pass on Keras' second try under another path, which holds nothing.
  def save_own_variables(self, store):
    store["num_hidden_layers"] = np.int64(self.config.num_hidden_layers)

  def load_own_variables(self, store):
    if "num_hidden_layers" not in store:  # a file without it loads unchecked
      return
    saved = int(store["num_hidden_layers"])
    if saved != self.config.num_hidden_layers:
      raise ValueError(f"the weights are of {saved} transformer layers, but "
                       "the config's num_hidden_layers is "
                       f"{self.config.num_hidden_layers}")

  def keras_inputs(self, x, method):
    """x as FitModel.keras_inputs gives it, refused where it holds text but
    the model takes ids (check_not_text)."""
    x = super().keras_inputs(x, method)
    if not self.takes_text:
      self.check_not_text(x, method)
    return x

  # Whether the model takes raw text (TextModel: with a preprocessor).
  takes_text = False

  def check_not_text(self, x, method):
    """Raises ValueError where x holds text but the model takes ids
    (method: "predict", or "model" for a call), naming them and how to
    get a model that takes text: Keras' own error says only
    "Unrecognized data type"."""
    if not fit_inputs.holds_text(x):
      return
    where = type(self).__name__ + ("" if method == "model" else f".{method}")
    raise ValueError(f"{where}: the model takes ids "
                     f"({', '.join(self.input_ranks)}), not text; "
                     f"{self.text_advice()}")

  def text_advice(self):
    """How to give this model text, for check_not_text."""
    return ("tokenise the texts first: bert_tf.load_pretrained(model_dir)"
            ".preprocessor() gives a BertPreprocessor that does")

  def get_config(self):
    config = super().get_config()
    config["config"] = self.config.to_dict()
    if self.quantized_to:
      config["quantized_to"] = self.quantized_to
    if self.lora is not None:
      config["lora"] = lora_adapters.config_of(self)
    return config

  @classmethod
  def from_config(cls, config):
    """The model of a get_config dict, its sizes checked first against the
    .keras file Keras is loading, if any (keras_file_sizes.check)."""
    check_lora_config(config.get("lora"), cls.__name__)
    bert_config = keras_file_sizes.check(cls, config)
    arguments = dict(config)
    if bert_config is not None:
      arguments["config"] = bert_config
    mode = arguments.pop("quantized_to", None)
    adapters = arguments.pop("lora", None)
    try:
      model = cls.built_in(arguments.pop("dtype", None),
                           **cls.constructor_arguments(arguments))
    except TypeError as error:  # Keras would wrap it in the whole config
      raise ValueError(f"{cls.__name__} config: {error}") from error
    if mode:
      model.quantize(mode)
    if adapters:
      adapters = dict(adapters)
      model.new_weights = adapters.pop("new_weights", [])
      model.enable_lora(**adapters)
    return model

  @classmethod
  def from_pretrained(cls, model_dir, max_seq_length=None, **arguments):
    """This model from any model directory (a release, a community
    checkpoint, a Hugging Face or sentence-transformers folder, a run's
    output_dir), its weights loaded, with the directory's preprocessor
    where the model takes text, compiled with the task's defaults
    (compile()): `BertClassifier.from_pretrained(dir, num_labels=2)`, then
    `fit(sentences, labels)`.

    Args:
      model_dir: the directory, or a ModelDirectory opened already
        (bert_tf.open_model_directory).
      max_seq_length: the preprocessor's; by default 128, or less where the
        tokenizer or the position table is shorter.
      **arguments: the class's own (num_labels, labels, ...); num_labels
        and labels default to the directory's head where it is this
        model's kind. A head of the checkpoint's shape is reused; otherwise
        the model has a new one, and a warning names every weight that
        starts at random.
    """
    # pylint: disable-next=g-import-not-at-top
    from bert_tf.models.from_pretrained import task_model
    return task_model(cls, model_dir, max_seq_length, **arguments)

  @classmethod
  def constructor_arguments(cls, config):
    """The constructor's arguments from get_config's dict (a subclass
    deserialises what it serialised)."""
    return config

  def save_pretrained(self, directory, format="huggingface", vocab_file=None,
                      architecture=None):
    """Writes the model as a model directory, as convert_checkpoint would
    from its checkpoint: "huggingface" (config.json of its transformers
    class and head's labels, model.safetensors, tokenizer files) or
    "original" (bert_config.json, bert_model.ckpt, vocab.txt), into a new
    or empty `directory`; an embedder or a classifier also as
    "sentence-transformers" (a Hugging Face folder with its modules; a
    classifier as a CrossEncoder).

    Args:
      vocab_file: the vocabulary of a model without a preprocessor (one
        with a preprocessor writes its own).
      architecture: the transformers class, where the model is more than
        one (a BertPretrainer: "BertForPreTraining", or "BertForMaskedLM");
        see huggingface_architectures.
    """
    # pylint: disable-next=g-import-not-at-top
    from bert_tf.checkpoints.save_pretrained import save_pretrained
    save_pretrained(self.merge_lora(), directory, format, vocab_file,
                    architecture)

  def export(self, filepath, format="tf_saved_model", verbose=None,
             input_signature=None, **kwargs):
    """keras.Model.export ("tf_saved_model", "onnx", "litert", ...) with
    input_signature defaulting to the model's own, in inference mode, with
    list outputs flattened (see flat_outputs)."""
    instead = _NOT_EXPORTED.get((format, self.quantized_to))
    if instead:
      raise ValueError(f"{type(self).__name__}.export: format={format!r} "
                       f"cannot convert kernels quantized to "
                       f"{self.quantized_to}; {instead}")
    return keras.Model.export(
        _FlatOutputs(self.merge_lora()), filepath, format=format,
        verbose=verbose,
        input_signature=input_signature or self.input_signature(), **kwargs)
