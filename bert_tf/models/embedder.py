"""BertEmbedder: a sentence embedder, as sentence-transformers builds one
from a BERT: pooling, Dense modules, Normalize."""

import keras
import numpy as np
import tensorflow as tf
from keras import ops
from scipy import spatial

from bert_tf.checkpoints import sentence_transformers
from bert_tf.checkpoints.names import check_pooling, dense_module_name
from bert_tf.layers.activations import HEAD_ACTIVATIONS
from bert_tf.layers.initializers import truncated_normal
from bert_tf.layers.pooling import SentencePooling, l2_normalize
from bert_tf.models.argument_checks import check_positive_int
from bert_tf.models.predictor import Predictor
from bert_tf.models.text_model import TextModel, checked_text, kind_of
from bert_tf.objectives.embedding import MultipleNegativesRankingLoss

# The similarity functions of sentence-transformers' similarity_fn_name.
SIMILARITIES = sentence_transformers.SIMILARITIES


def _dense_spec(spec, index, model_name):
  """A Dense module's description, checked: {"units", "activation",
  "use_bias"}."""
  where = f"{model_name}: dense[{index}]"
  if not isinstance(spec, dict) or set(spec) - {"units", "activation",
                                                "use_bias"}:
    raise ValueError(f"{where} is {spec!r}; expected a dict of units, "
                     f"activation and use_bias")
  units = spec.get("units")
  if isinstance(units, bool) or not isinstance(units, int) or units < 1:
    raise ValueError(f"{where}: units={units!r} must be an integer >= 1")
  activation = spec.get("activation", "tanh")
  if activation not in HEAD_ACTIVATIONS:
    raise ValueError(f"{where}: activation={activation!r}; expected one of "
                     f"{', '.join(HEAD_ACTIVATIONS)}")
  return {"units": units, "activation": activation,
          "use_bias": bool(spec.get("use_bias", True))}


@keras.saving.register_keras_serializable(package="bert_tf")
class BertEmbedder(TextModel):
  """The encoder's tokens pooled into one vector per text, through any
  Dense layers, optionally L2-normalised: sentence-transformers'
  Transformer, Pooling, Dense and Normalize modules.

  Args:
    config: a BertConfig (or its dict).
    preprocessor: a BertPreprocessor (see TextModel); encode() needs one.
    pooling: a mode or a list of them, concatenated in order: "cls", "max",
      "mean" or "mean_sqrt_len_tokens" (layers.pooling.SentencePooling).
    dense: a list of {"units", "activation", "use_bias"}, one per Dense
      layer after the pooling; the activations a sentence-transformers
      Dense module can have ("tanh", "linear", "sigmoid", "relu",
      "gelu_exact": layers.activations.HEAD_ACTIVATIONS).
    normalize: divide each embedding by its L2 norm.
    prompts: {name: text prefixed to a text before it is encoded}.
    default_prompt_name: the prompt encode() applies unless told otherwise.
    similarity: how embeddings compare (SIMILARITIES), as
      sentence-transformers' similarity_fn_name.

  Inputs: the encoder's dict, or text; a tuple of k text columns (a
    training batch of (anchor, positive) pairs) embeds each column.

  Outputs: {"embedding": float32 [batch, dim]} ([batch, k, dim] for k
    columns).
  """

  config_arguments = ("pooling", "dense", "normalize", "prompts",
                      "default_prompt_name", "similarity")
  # Its encoder is a BertModel; save_pretrained writes it as a
  # sentence-transformers folder, in no other format.
  huggingface_architectures = ("BertModel",)
  # No runner trains it: compile_defaults gives the contrastive loss.
  objective = None

  def __init__(self, config, *, preprocessor=None, pooling="mean", dense=(),
               normalize=False, prompts=None, default_prompt_name=None,
               similarity="cosine", **kwargs):
    super().__init__(config, preprocessor=preprocessor, **kwargs)
    name = type(self).__name__
    self.pooling = list(check_pooling(pooling, name))
    self.dense = [_dense_spec(spec, index, name)
                  for index, spec in enumerate(dense)]
    self.normalize = bool(normalize)
    self.prompts = _checked_prompts(prompts, name)
    if default_prompt_name is not None and \
        default_prompt_name not in self.prompts:
      raise ValueError(f"{name}: default_prompt_name "
                       f"{default_prompt_name!r} is not one of the prompts "
                       f"({', '.join(self.prompts) or 'none'})")
    self.default_prompt_name = default_prompt_name
    if similarity not in SIMILARITIES:
      raise ValueError(f"{name}: similarity={similarity!r}; expected one of "
                       f"{', '.join(SIMILARITIES)}")
    self.similarity = similarity
    self.pooler = SentencePooling(self.pooling, name="sentence_pooling")
    self.dense_layers = [
        keras.layers.Dense(
            spec["units"], activation=HEAD_ACTIVATIONS[spec["activation"]],
            use_bias=spec["use_bias"],
            kernel_initializer=truncated_normal(
                self.config.initializer_range),
            name=f"dense_{index}")
        for index, spec in enumerate(self.dense)]
    # The pooler is not used: its weights would get no gradient.
    self.encoder.pooler.trainable = False
    self._predictor = None
    self.build()

  @property
  def checkpoint_head_names(self):
    """The Dense layers' variables, by names.dense_module_name: those a
    sentence-transformers folder's Dense modules are read under."""
    names = {}
    for index, layer in enumerate(self.dense_layers):
      for variable in ("kernel", "bias") if layer.use_bias else ("kernel",):
        names[dense_module_name(index, variable)] = \
            f"dense_layers.{index}.{variable}"
    return names

  @property
  def pooled_width(self):
    """The length of the pooled vector, the first Dense layer's input."""
    return self.config.hidden_size * len(self.pooling)

  @property
  def dimension(self):
    """The length of an embedding."""
    if self.dense:
      return self.dense[-1]["units"]
    return self.pooled_width

  def build(self, input_shape=None):
    width = self.pooled_width
    for layer in self.dense_layers:
      layer.build((None, width))
      width = layer.units
    self.built = True

  def sentence_transformers_pipeline(self):
    """The sentence-transformers modules and settings it is, for
    save_pretrained(format="sentence-transformers")."""
    width = self.pooled_width
    dense = []
    for spec in self.dense:
      dense.append(sentence_transformers.DenseModule(
          in_features=width, units=spec["units"],
          activation=spec["activation"], use_bias=spec["use_bias"],
          weights_file=""))
      width = spec["units"]
    return sentence_transformers.Pipeline(
        model_type=sentence_transformers.EMBEDDER, transformer_dir="",
        pooling=tuple(self.pooling),
        dense=dense, normalize=self.normalize, prompts=dict(self.prompts),
        default_prompt_name=self.default_prompt_name,
        similarity=self.similarity)

  def save_pretrained(self, directory, format="sentence-transformers",
                      vocab_file=None, architecture=None):
    """Writes a sentence-transformers folder (today's layout) that
    sentence-transformers loads with the same embeddings; see
    BertKerasModel.save_pretrained."""
    super().save_pretrained(directory, format, vocab_file, architecture)

  def target_output(self, outputs):
    return outputs["embedding"]

  def call(self, inputs, training=None):
    if isinstance(inputs, (tuple, list)):
      return {"embedding": ops.stack(
          [self.call(column, training)["embedding"] for column in inputs],
          axis=1)}
    inputs = self.encoder_inputs(inputs)
    sequence_output = self.encoder(inputs, training=training)[
        "sequence_output"]
    input_mask = inputs.get("input_mask")
    if input_mask is None:
      input_mask = ops.ones_like(inputs["input_ids"])
    embedding = self.pooler(sequence_output, input_mask)
    for layer in self.dense_layers:
      embedding = ops.cast(layer(embedding), "float32")
    if self.normalize:
      embedding = l2_normalize(embedding)
    return {"embedding": embedding}

  def compile_defaults(self):
    """sentence-transformers' default training loss, no metrics."""
    return MultipleNegativesRankingLoss(), None

  def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None,
                   training=True):
    # A contrastive loss has no targets (the positives are the batch's
    # other column): Keras needs some y to pass its loss.
    if y is None:
      y = ops.zeros(ops.shape(self.target_output(y_pred))[:1])
    return super().compute_loss(x, y, y_pred, sample_weight, training)

  def prompt_of(self, prompt_name=None, prompt=None):
    """The text encode() prefixes: `prompt` if given, else the prompt
    named, else the default prompt's, else none ("")."""
    model_name = type(self).__name__
    if prompt is not None:
      return _checked_prompt(prompt, "prompt", model_name)
    name = prompt_name if prompt_name is not None else \
        self.default_prompt_name
    if name is None:
      return ""
    if not isinstance(name, str) or name not in self.prompts:
      raise ValueError(f"{model_name}: prompt_name={name!r} is not one of "
                       f"its prompts ({', '.join(self.prompts) or 'none'})")
    return self.prompts[name]

  def encode(self, texts, batch_size=32, prompt_name=None, prompt=None):
    """Embeddings of a list of texts, as sentence-transformers' encode.

    The texts (each after its prompt, see prompt_of) are tokenised at
    once, sorted by length, and each batch runs at its own length
    (models.predictor.Predictor).

    Args:
      texts: a list (or any iterable) of str, or of bytes in UTF-8.
      batch_size: the most texts run at once.
      prompt_name, prompt: see prompt_of.

    Returns:
      float32 numpy [len(texts), dimension], in the texts' order.
    """
    name = f"{type(self).__name__}.encode"
    if self.preprocessor is None:
      raise ValueError(f"{name}: the model has no preprocessor to tokenise "
                       "text with")
    check_positive_int(batch_size, "batch_size", name)
    texts = _text_list(texts, name)
    prefix = self.prompt_of(prompt_name, prompt)
    if not texts:
      return np.zeros((0, self.dimension), np.float32)
    features = {key: value.numpy() for key, value in self.preprocessor(
        tf.constant([prefix + text for text in texts])).items()}
    features["is_real_example"] = np.ones(len(texts), np.int32)
    return self._prediction().predict(features, batch_size)["embedding"]

  def _prediction(self):
    """The Predictor encode() runs, made once (it holds the traced
    function); each batch at its longest text's own length."""
    if self._predictor is None:
      self._predictor = Predictor(tf.distribute.get_strategy(), self,
                                  round_lengths=False)
    return self._predictor

  def similarity_scores(self, first, second):
    """[len(first), len(second)] similarities of two sets of embeddings by
    the model's similarity, as sentence-transformers' similarity: cosine,
    dot, or minus the euclidean or manhattan distance. An embedding [dim]
    counts as a set of one."""
    name = f"{type(self).__name__}.similarity_scores"
    first = _embedding_rows(first, "first", name)
    second = _embedding_rows(second, "second", name)
    if first.shape[1] != second.shape[1]:
      raise ValueError(f"{name}: first has {first.shape[1]} dimensions, "
                       f"second {second.shape[1]}")
    if self.similarity == "cosine":
      first, second = _unit_rows(first), _unit_rows(second)
    if self.similarity in ("cosine", "dot"):
      return first @ second.T
    return -_distances(first, second, _DISTANCE_METRICS[self.similarity])


# scipy's name of each distance similarity_scores negates.
_DISTANCE_METRICS = {"euclidean": "euclidean", "manhattan": "cityblock"}
# The float64 distances computed at once: 32 MB.
_DISTANCE_BLOCK = 1 << 22


def _embedding_rows(embeddings, argument, method_name):
  """embeddings as float32 numpy [n, dim] (one embedding [dim] as [1,
  dim]), or a ValueError naming the argument."""
  try:
    rows = np.asarray(embeddings)
  except ValueError as error:  # ragged nested lists
    raise ValueError(f"{method_name}: {argument} is not an array of "
                     f"embeddings ({error})") from None
  if rows.dtype.kind not in "iuf" or rows.ndim not in (1, 2):
    raise ValueError(f"{method_name}: {argument} has shape {rows.shape} and "
                     f"dtype {rows.dtype}; expected numbers [n, dim] or "
                     "[dim]")
  return np.atleast_2d(rows).astype(np.float32, copy=False)


def _unit_rows(rows):
  """Each row divided by its L2 norm (at least 1e-12, as torch's
  normalize)."""
  return rows / np.maximum(np.linalg.norm(rows, axis=-1, keepdims=True),
                           1e-12)


def _distances(first, second, metric):
  """float32 [len(first), len(second)] distances, computed exactly (in
  float64) a block of rows at a time: never [n, m, dim] at once."""
  distances = np.empty((len(first), len(second)), np.float32)
  second = second.astype(np.float64)
  rows = max(1, _DISTANCE_BLOCK // max(len(second), 1))
  for start in range(0, len(first), rows):
    distances[start:start + rows] = spatial.distance.cdist(
        first[start:start + rows].astype(np.float64), second, metric)
  return distances


def _checked_prompts(prompts, model_name):
  """prompts as a dict of str to str, or a ValueError naming the first
  that is not."""
  prompts = dict(prompts or {})
  for prompt_name, text in prompts.items():
    if not isinstance(prompt_name, str):
      raise ValueError(f"{model_name}: prompts has a name {prompt_name!r}; "
                       "expected a str")
    _checked_prompt(text, f"prompts[{prompt_name!r}]", model_name)
  return prompts


def _checked_prompt(prompt, argument, model_name):
  """prompt, or a ValueError naming the argument unless it is a str UTF-8
  can encode."""
  if not isinstance(prompt, str):
    raise ValueError(f"{model_name}: {argument}={prompt!r}; expected a str")
  return checked_text(prompt, argument, model_name)


def _text_list(texts, method_name):
  """texts as a list of str, or a ValueError naming the argument or the
  index of the first text that is not one."""
  if tf.is_tensor(texts):
    texts = texts.numpy()
  if isinstance(texts, np.ndarray):
    texts = texts.tolist()
  if isinstance(texts, (str, bytes)):
    raise ValueError(f"{method_name} takes a list of texts, not one string")
  if texts is None or isinstance(texts, dict) or not hasattr(texts,
                                                              "__iter__"):
    raise ValueError(f"{method_name}: texts is {kind_of(texts)}; expected "
                     "a list of texts")
  return [_as_str(text, f"texts[{index}]", method_name)
          for index, text in enumerate(texts)]


def _as_str(text, argument, method_name):
  """text (a str, or bytes in UTF-8) as a str, or a ValueError naming the
  argument (text_model.checked_text)."""
  if isinstance(text, bytes):
    try:
      return text.decode("utf-8")
    except UnicodeDecodeError:
      raise ValueError(f"{method_name}: {argument} is bytes that are not "
                       "UTF-8") from None
  return checked_text(text, argument, method_name)
