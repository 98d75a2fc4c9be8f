"""BertEmbedder: a sentence embedder, as sentence-transformers builds one
from a BERT: pooling, Dense modules, Normalize."""

import keras
import numpy as np
import tensorflow as tf
from keras import ops

from bert_tf.checkpoints import sentence_transformers
from bert_tf.checkpoints.names import check_pooling, dense_module_name
from bert_tf.layers.activations import HEAD_ACTIVATIONS
from bert_tf.layers.initializers import truncated_normal
from bert_tf.layers.pooling import SentencePooling, l2_normalize
from bert_tf.models.text_model import TextModel
from bert_tf.training.losses import MultipleNegativesRankingLoss
from bert_tf.training.predictor import Predictor

# The similarity functions of sentence-transformers' similarity_fn_name.
SIMILARITIES = ("cosine", "dot", "euclidean", "manhattan")


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
    pooling: a mode or a list of them, concatenated in order: "cls", "max",
      "mean" or "mean_sqrt_len_tokens" (layers.pooling.SentencePooling).
    dense: a list of {"units", "activation", "use_bias"}, one per Dense
      layer after the pooling; the activations a sentence-transformers
      Dense module can have ("tanh", "linear", "sigmoid", "relu",
      "gelu_exact": layers.activations.HEAD_ACTIVATIONS).
    normalize: divide each embedding by its L2 norm.
    preprocessor: a BertPreprocessor (see TextModel); encode() needs one.
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

  def __init__(self, config, pooling="mean", dense=(), normalize=False,
               preprocessor=None, prompts=None, default_prompt_name=None,
               similarity="cosine", **kwargs):
    super().__init__(config, preprocessor, **kwargs)
    name = type(self).__name__
    self.pooling = list(check_pooling(pooling, name))
    self.dense = [_dense_spec(spec, index, name)
                  for index, spec in enumerate(dense)]
    self.normalize = bool(normalize)
    self.prompts = dict(prompts or {})
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
          width, spec["units"], spec["activation"], spec["use_bias"], ""))
      width = spec["units"]
    return sentence_transformers.Pipeline(
        sentence_transformers.EMBEDDER, "", pooling=tuple(self.pooling),
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
    if prompt is not None:
      return prompt
    name = prompt_name if prompt_name is not None else \
        self.default_prompt_name
    if name is None:
      return ""
    if name not in self.prompts:
      raise ValueError(f"{type(self).__name__}: prompt_name={name!r} is not "
                       f"one of its prompts "
                       f"({', '.join(self.prompts) or 'none'})")
    return self.prompts[name]

  def encode(self, texts, batch_size=32, prompt_name=None, prompt=None):
    """Embeddings of a list of texts, as sentence-transformers' encode.

    The texts (each after its prompt, see prompt_of) are tokenised at
    once, sorted by length, and each batch runs at its own length
    (training.predictor.Predictor).

    Returns:
      float32 numpy [len(texts), dimension], in the texts' order.
    """
    if self.preprocessor is None:
      raise ValueError(f"{type(self).__name__}.encode: the model has no "
                       "preprocessor to tokenise text with")
    if isinstance(texts, (str, bytes)):
      raise ValueError(f"{type(self).__name__}.encode takes a list of "
                       "texts, not one string")
    texts = list(texts)
    if not texts:
      return np.zeros((0, self.dimension), np.float32)
    prefix = self.prompt_of(prompt_name, prompt)
    features = {name: value.numpy() for name, value in self.preprocessor(
        tf.constant([prefix + _as_str(text) for text in texts])).items()}
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
    the model's similarity: cosine, dot, or minus the euclidean or
    manhattan distance (sentence-transformers' similarity)."""
    first = np.asarray(first, np.float32)
    second = np.asarray(second, np.float32)
    if self.similarity == "cosine":
      first = first / np.maximum(np.linalg.norm(first, axis=-1,
                                                keepdims=True), 1e-12)
      second = second / np.maximum(np.linalg.norm(second, axis=-1,
                                                  keepdims=True), 1e-12)
    if self.similarity in ("cosine", "dot"):
      return first @ second.T
    order = 2 if self.similarity == "euclidean" else 1
    return -np.linalg.norm(first[:, None] - second[None], ord=order, axis=-1)


def _as_str(text):
  if isinstance(text, bytes):
    return text.decode("utf-8")
  if not isinstance(text, str):
    raise ValueError(f"BertEmbedder.encode: {text!r} is not a text")
  return text
