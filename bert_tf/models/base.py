"""What every bert_tf model adds to keras.Model: a config of its
BertConfig, quantize() limited to what keeps the outputs right and saved
with the model, weights saved with the layer count they are of,
fit/evaluate/predict that refuse, clearly and before any step, inputs and
targets the model cannot take, and export() with the model's own
inputs."""

import functools
import inspect
import logging
import numbers
import types

import keras
import numpy as np
import tensorflow as tf

from bert_tf.checkpoints.names import first_repeated
from bert_tf.models import fit_plan
from bert_tf.models import keras_file_sizes
from bert_tf.models import lora as lora_adapters
from bert_tf.models import targets
from bert_tf.training import precision

# Measured on a classifier fine-tuned on SST-2 (benchmarks/quantization.py,
# docs/keras.md): each keeps over 99.7% of the float model's predictions.
# GPTQ and AWQ are refused: they need calibration data and a description of
# the model's blocks (get_quantization_layer_structure) that bert_tf does
# not give.
QUANTIZATION_MODES = ("int8", "int4", "float8")

ENCODER_INPUTS = ("input_ids", "input_mask", "segment_ids")

logger = logging.getLogger(__name__)


def _is_dense(layer):
  return isinstance(layer, keras.layers.Dense)


def check_positive_int(value, name, model_name):
  """Raises ValueError, naming the argument, unless value is an integer
  >= 1: a head of 0 units is built, and fails only at its first batch."""
  if (isinstance(value, bool) or not isinstance(value, numbers.Integral)
      or value < 1):
    raise ValueError(f"{model_name}: {name}={value!r} must be an integer "
                     ">= 1")


def check_labels(labels, num_labels, model_name):
  """Raises ValueError unless labels is None or a list naming each of the
  num_labels rows of the head once (as a folder writes it: a string, so 1
  and "1" are one label)."""
  if labels is None:
    return
  if isinstance(labels, (str, bytes)):
    raise ValueError(f"{model_name}: labels={labels!r}; expected a list of "
                     f"the head's {num_labels} labels")
  if len(labels) != num_labels:
    raise ValueError(f"{model_name}: {len(labels)} labels for "
                     f"num_labels={num_labels}")
  if None in labels:
    raise ValueError(f"{model_name}: labels[{list(labels).index(None)}] is "
                     f"None; a label is a name (a string) or a number")
  repeated = first_repeated(labels)
  if repeated is not None:
    raise ValueError(f"{model_name}: labels name {repeated!r} twice; each "
                     f"of the head's rows has a label of its own")


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


def _check_fit_numbers(model_name, args, kwargs):
  """Raises ValueError unless fit's batch_size, epochs and steps_per_epoch
  (those given) are integers >= 1: the default schedule divides by them,
  and Keras takes some of the others in silence."""
  arguments = inspect.signature(keras.Model.fit).bind(
      None, None, None, *args, **kwargs).arguments
  for name in ("batch_size", "epochs", "steps_per_epoch"):
    if arguments.get(name) is not None:
      check_positive_int(arguments[name], name, f"{model_name}.fit")


def _check_lora_config(adapters, model_name):
  """Raises ValueError unless a config's lora is None or enable_lora's
  arguments (rank, and targets and alpha or not), and new_weights or not:
  a list of the weight paths that train beside the adapters."""
  if adapters is not None and (
      not isinstance(adapters, dict) or "rank" not in adapters
      or set(adapters) - {"rank", "targets", "alpha", "new_weights"}
      or not _is_list_of_str(adapters.get("new_weights", []))):
    raise ValueError(f"{model_name} config: lora={adapters!r}; expected "
                     "enable_lora's arguments: rank, targets, alpha (and "
                     "new_weights, a list of weight paths)")


def _is_list_of_str(value):
  return isinstance(value, list) and all(isinstance(item, str)
                                         for item in value)


def _weights_as_arrays(kwargs, name):
  """kwargs' sample_weight, a list, as an array (Keras takes arrays, and
  blames x for a list)."""
  if kwargs.get("sample_weight") is not None:
    kwargs["sample_weight"] = targets.as_arrays(kwargs["sample_weight"],
                                                f"{name}: sample_weight")


def _steps_taken(optimizer):
  """optimizer.iterations as a Python int (int() of it fails under a
  tf.distribute strategy)."""
  return int(keras.ops.convert_to_numpy(optimizer.iterations))


def _has_no_examples(x):
  """True for inputs Keras fails on with an unrelated error (KeyError: 'pop
  from an empty set'): an empty list, tuple or dict, or a first axis of 0."""
  leaves = keras.tree.flatten(x)
  return not leaves or any(
      getattr(leaf, "shape", None) is not None and len(leaf.shape) > 0
      and leaf.shape[0] == 0 for leaf in leaves)


def _holds_text(x):
  """True for inputs holding strings: Python ones, a numpy array or a
  tensor of them, or a dataset whose elements have some."""
  for leaf in keras.tree.flatten(x):
    if isinstance(leaf, tf.data.Dataset):
      leaf = leaf.element_spec
      if any(spec.dtype == tf.string for spec in tf.nest.flatten(leaf)):
        return True
    elif isinstance(leaf, (str, bytes)) or _is_text_array(leaf):
      return True
  return False


def _is_text_array(value):
  """A numpy array of strings, or a tensor (eager or Keras') of them."""
  if isinstance(value, np.ndarray):
    return value.dtype.kind in "US" or (
        value.dtype.kind == "O" and value.size > 0
        and isinstance(value.flat[0], (str, bytes)))
  dtype = getattr(value, "dtype", None)
  if isinstance(dtype, tf.DType):
    return dtype == tf.string
  return dtype == "string"  # a KerasTensor's


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


class BertKerasModel(keras.Model):
  """A keras.Model built from a BertConfig (`self.config`, stored by
  get_config), whose quantize() covers its Dense layers (the attention
  projections, the feed-forward layers, the pooler, the masked-LM
  transform) and refuses GPTQ and AWQ, and whose export() needs no input
  signature.

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

  @classmethod
  def built_in(cls, dtype, *args, **kwargs):
    """cls(*args, **kwargs) with every layer in the dtype policy `dtype`
    ("bfloat16": bfloat16 weights and computation; "mixed_bfloat16":
    float32 weights, bfloat16 computation; None: the global policy)."""
    with precision.keras_policy(dtype):
      return cls(*args, dtype=dtype, **kwargs)

  def __new__(cls, *args, **kwargs):
    model = super().__new__(cls, *args, **kwargs)
    # Keras wraps each instance's quantize in one that resolves the mode
    # first, answering "int16" or "gptq" without a GPTQConfig itself:
    # bert_tf's refusal goes around that wrapper.
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
    super().quantize(mode, config=config, filters=filters or _is_dense,
                     **kwargs)
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

  def _retrace(self):
    """Forgets what Keras traced for fit, evaluate and predict (it holds
    the variables of its first call), compiling the model again where it
    was compiled."""
    self._forget_traces()
    if getattr(self, "compiled", False) and self._compile_arguments:
      arguments = dict(self._compile_arguments)
      optimizer = arguments["optimizer"]
      if isinstance(optimizer, keras.optimizers.Optimizer) and \
          optimizer.built:
        arguments["optimizer"] = type(optimizer).from_config(
            optimizer.get_config())
        logger.info("%s: a new %s for the trainable weights, its state was "
                    "of those before", type(self).__name__,
                    type(optimizer).__name__)
      self.compile(**arguments)

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

  # compile()'s optimizer where none was given, until the first fit sizes
  # its schedule (fit_plan.PlannedOptimizer).
  _planned_optimizer = None

  # compile()'s arguments, to compile again after enable_lora; a mapping
  # Keras does not track (a dict's metrics would count twice).
  _compile_arguments = None

  def compile(self, optimizer=None, loss=None, metrics=None,
              learning_rate=fit_plan.LEARNING_RATE,
              warmup_proportion=fit_plan.WARMUP_PROPORTION, **kwargs):
    """keras.Model.compile, with the task's defaults for what is not given:
    its loss and, with it, its metrics (compile_defaults), and the original's
    AdamWeightDecay at learning_rate (a number > 0), warmed up over
    warmup_proportion (0 to 1) of the steps and decayed to 0 at the last
    step of the first fit that takes one, sized on the steps that fit runs
    from its data, batch size and epochs (fit_plan); a later fit warns that
    it trains at rate 0. `compile()` then fit on strings trains as
    run_classifier with its default flags, where the batch size divides
    the examples. A refused compile leaves the model as it was compiled."""
    arguments = types.MappingProxyType(dict(
        optimizer=optimizer, loss=loss, metrics=metrics,
        learning_rate=learning_rate, warmup_proportion=warmup_proportion,
        **kwargs))
    if loss is None:  # the task's loss, and its metrics unless given
      loss, default_metrics = self.compile_defaults()
      metrics = default_metrics if metrics is None else metrics
    plan = None
    if optimizer is None:
      plan = fit_plan.PlannedOptimizer(f"{type(self).__name__}.compile",
                                       learning_rate, warmup_proportion)
      optimizer = plan.optimizer
    super().compile(optimizer=optimizer, loss=loss, metrics=metrics,
                    **kwargs)
    self._planned_optimizer = plan
    self._compile_arguments = arguments

  def get_compile_config(self):
    config = super().get_compile_config()
    if config is not None and self._planned_optimizer is not None:
      # Saved before its first fit: the optimizer is still to be sized.
      config = {**config, "optimizer": None,
                **self._planned_optimizer.compile_arguments()}
    return config

  def compile_from_config(self, config):
    # Keras' own, which skips a model whose compile() is its own. An
    # optimizer never used (saved before the first fit) has no slots.
    self.compile(**keras.saving.deserialize_keras_object(config))
    if self.built and self._planned_optimizer is None:
      self.optimizer.build(self.trainable_variables)

  def compile_defaults(self):
    """compile()'s (loss, metrics) where none are given: the task's."""
    return None, None

  def fit(self, x=None, y=None, *args, **kwargs):
    _check_fit_numbers(type(self).__name__, args, kwargs)
    if isinstance(kwargs.get("validation_data"), tuple):
      kwargs["validation_data"] = self._keras_data(
          *kwargs["validation_data"], method="fit",
          where="validation_data's ")
    x, y = self._keras_data(x, y, method="fit")
    _weights_as_arrays(kwargs, f"{type(self).__name__}.fit")
    plan = self._planned_optimizer
    if plan is not None:
      plan.size_for(type(self).__name__, x, args, kwargs)
    else:
      self._warn_if_the_rate_is_zero()
    try:
      return self._run_keras(super().fit, x, y, *args, **kwargs)
    finally:  # sized by the first fit that takes a step
      if plan is not None and _steps_taken(self.optimizer):
        self._planned_optimizer = None

  def evaluate(self, x=None, y=None, *args, **kwargs):
    x, y = self._keras_data(x, y, method="evaluate")
    _weights_as_arrays(kwargs, f"{type(self).__name__}.evaluate")
    return self._run_keras(super().evaluate, x, y, *args, **kwargs)

  def predict(self, x, *args, **kwargs):
    return self._run_keras(super().predict, self.keras_inputs(x, "predict"),
                           *args, **kwargs)

  def _run_keras(self, run, *args, **kwargs):
    """Keras' fit, evaluate or predict (`run`), forgetting what Keras traced
    where it fails: a traced function whose first call failed fails every
    later one ("Creating variables on a non-first call")."""
    try:
      return run(*args, **kwargs)
    except Exception:
      self._forget_traces()
      raise

  def _forget_traces(self):
    self.train_function = self.test_function = self.predict_function = None

  def _warn_if_the_rate_is_zero(self):
    """Warns where fit would train at learning rate 0: a schedule (such as
    compile()'s default, sized by the first fit) that has ended."""
    optimizer = getattr(self, "optimizer", None)
    steps = 0 if optimizer is None else _steps_taken(optimizer)
    if steps and keras.ops.convert_to_numpy(optimizer.learning_rate) == 0:
      logger.warning("%s.fit: the learning rate is 0 at step %d: the "
                     "optimizer's schedule has ended (compile()'s default "
                     "ends with the first fit); compile() again to train on",
                     type(self).__name__, steps)

  def _keras_data(self, x, y=None, *rest, method, where=""):
    """(x, y, *rest) of fit or evaluate (`method`; `where`: "" or
    "validation_data's ") as Keras takes them: x by keras_inputs, y by
    keras_targets, a sample weight's list as an array."""
    x = self.keras_inputs(x, method)
    name = f"{type(self).__name__}.{method}: {where}"
    return (x, self.keras_targets(x, y, f"{name}y"),
            *(targets.as_arrays(weights, f"{name}sample_weight")
              for weights in rest))

  def keras_targets(self, x, y, where):
    """y as fit and evaluate pass it to Keras (lists as arrays), checked
    against x (as keras_inputs gives it) by check_targets before any step;
    where: "BertClassifier.fit: y", for messages."""
    y = targets.as_arrays(y, where)
    self.check_targets(x, y, where)
    return y

  def check_targets(self, x, y, where):
    """Raises ValueError for targets y (arrays, tensors or None) that the
    model's loss would fail on at a step, or read wrongly. A model that
    trains on targets says what they are; here none."""

  def keras_inputs(self, x, method):
    """x (or validation_data's x) as fit, evaluate and predict (`method`)
    pass it to Keras: refused when it holds no examples (None passes: a
    dataset may come otherwise), or text the model does not take."""
    if x is not None and _has_no_examples(x):
      raise ValueError(f"{type(self).__name__}.{method}: x holds no "
                       "examples")
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
    if not _holds_text(x):
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
    _check_lora_config(config.get("lora"), cls.__name__)
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
      model_dir: the directory.
      max_seq_length: the preprocessor's; by default 128, or less where the
        tokenizer or the position table is shorter.
      **arguments: the class's own (num_labels, labels, ...); num_labels
        and labels default to the directory's head where it is this
        model's kind. A head of the checkpoint's shape is reused; otherwise
        the model has a new one, and a warning names every weight that
        starts at random.
    """
    from bert_tf.models import loading  # pylint: disable=g-import-not-at-top
    return loading.task_model(cls, model_dir, max_seq_length, **arguments)

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
    from bert_tf.checkpoints import saving  # pylint: disable=g-import-not-at-top
    saving.save_pretrained(self.merge_lora(), directory, format, vocab_file,
                           architecture)

  def export(self, filepath, format="tf_saved_model", verbose=None,
             input_signature=None, **kwargs):
    """keras.Model.export ("tf_saved_model", "onnx", "litert", ...) with
    input_signature defaulting to the model's own, in inference mode, with
    list outputs flattened (see flat_outputs)."""
    return keras.Model.export(
        _FlatOutputs(self.merge_lora()), filepath, format=format,
        verbose=verbose,
        input_signature=input_signature or self.input_signature(), **kwargs)
