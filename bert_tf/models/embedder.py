"""BertEmbedder: a sentence embedder, as sentence-transformers builds one
from a BERT: pooling, Dense modules, Normalize."""

import numbers

import keras
import numpy as np
from keras import ops

from bert_tf.checkpoints import sentence_transformers
from bert_tf.checkpoints.names import check_pooling, dense_module_name
from bert_tf.layers.activations import HEAD_ACTIVATIONS
from bert_tf.layers.initializers import truncated_normal
from bert_tf.layers.pooling import SentencePooling, l2_normalize
from bert_tf.models.argument_checks import check_positive_int
from bert_tf.models.text_encoding import (TextEncoderModel, checked_prompts,
                                         prompt_text, require_preprocessor,
                                         text_features, text_list)
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
class BertEmbedder(TextEncoderModel):
  """The encoder's tokens pooled into one vector per text, through any
  Dense layers, optionally L2-normalised: sentence-transformers'
  Transformer, Pooling, Dense and Normalize modules.

  Args:
    config: a BertConfig (or its dict).
    preprocessor: a BertPreprocessor (see TextModel); encode() needs one.
    pooling: a mode or a list of them, concatenated in order: "cls", "max",
      "mean", "mean_sqrt_len_tokens" or "weightedmean"
      (layers.pooling.SentencePooling).
    dense: a list of {"units", "activation", "use_bias"}, one per Dense
      layer after the pooling; the activations a sentence-transformers
      Dense module can have ("tanh", "linear", "sigmoid", "relu",
      "gelu_exact": layers.activations.HEAD_ACTIVATIONS).
    normalize: divide each embedding by its L2 norm.
    prompts: {name: text prefixed to a text before it is encoded}.
    default_prompt_name: the prompt encode() applies unless told otherwise.
    similarity: how embeddings compare (SIMILARITIES), as
      sentence-transformers' similarity_fn_name.
    truncate_dim: the first dimensions encode() keeps (Matryoshka), or
      None for all: an integer from 1 to dimension. As
      sentence-transformers cuts them after every module, a normalised
      embedding cut is not normalised again.
    include_prompt: whether the prompt's tokens ([CLS] with them) are
      pooled; False leaves them out, as sentence-transformers' Pooling
      with include_prompt false (see pooled_prompt_length).

  Inputs: the encoder's dict (with "prompt_length" int32 [batch], the
    tokens left out of the pooling where include_prompt is False), or
    text; a tuple of k text columns (a training batch of (anchor,
    positive) pairs) embeds each column.

  Outputs: {"embedding": float32 [batch, dimension]} ([batch, k,
    dimension] for k columns): not truncated, as sentence-transformers'
    forward (training losses cut their own).
  """

  config_arguments = ("pooling", "dense", "normalize", "prompts",
                      "default_prompt_name", "similarity", "truncate_dim",
                      "include_prompt")
  # Its encoder is a BertModel; save_pretrained writes it as a
  # sentence-transformers folder, in no other format.
  huggingface_architectures = ("BertModel",)
  # No runner trains it: compile_defaults gives the contrastive loss.
  objective = None

  def __init__(self, config, *, preprocessor=None, pooling="mean", dense=(),
               normalize=False, prompts=None, default_prompt_name=None,
               similarity="cosine", truncate_dim=None, include_prompt=True,
               **kwargs):
    super().__init__(config, preprocessor=preprocessor, **kwargs)
    name = type(self).__name__
    self.pooling = list(check_pooling(pooling, name))
    self.dense = [_dense_spec(spec, index, name)
                  for index, spec in enumerate(dense)]
    self.normalize = bool(normalize)
    self.prompts, self.default_prompt_name = checked_prompts(
        prompts, default_prompt_name, name)
    if similarity not in SIMILARITIES:
      raise ValueError(f"{name}: similarity={similarity!r}; expected one of "
                       f"{', '.join(SIMILARITIES)}")
    self.similarity = similarity
    self.truncate_dim = None if truncate_dim is None else \
        _check_truncate_dim(truncate_dim, self.dimension, name)
    if not isinstance(include_prompt, bool):
      raise ValueError(f"{name}: include_prompt={include_prompt!r}; "
                       "expected True or False")
    self.include_prompt = include_prompt
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
        similarity=self.similarity, truncate_dim=self.truncate_dim,
        include_prompt=self.include_prompt)

  def embed(self, inputs, training=None):
    inputs, sequence_output, input_mask = self.token_outputs(inputs,
                                                             training)
    prompt_length = None if self.include_prompt else \
        inputs.get("prompt_length")
    embedding = self.pooler(sequence_output, input_mask,
                            prompt_length=prompt_length)
    for layer in self.dense_layers:
      embedding = ops.cast(layer(embedding), "float32")
    if self.normalize:
      embedding = l2_normalize(embedding)
    return {"embedding": embedding}

  def compile_defaults(self):
    """sentence-transformers' default training loss, no metrics."""
    return MultipleNegativesRankingLoss(), None

  def prompt_of(self, prompt_name=None, prompt=None):
    """The text encode() prefixes: `prompt` if given, else the prompt
    named, else the default prompt's, else none ("")."""
    return prompt_text(self, prompt_name, prompt)

  def embedding_dimension(self, truncate_dim=None):
    """The length of encode()'s embeddings: truncate_dim (checked, naming
    it), else the model's truncate_dim, else dimension."""
    if truncate_dim is not None:
      return _check_truncate_dim(truncate_dim, self.dimension,
                                 f"{type(self).__name__}.encode")
    return self.truncate_dim or self.dimension

  def pooled_prompt_length(self, prompt, prompt_tokens):
    """The tokens the pooling leaves out of the texts after `prompt`, as
    sentence-transformers counts them: [CLS] and the prompt's word pieces
    (prompt_tokens: the length of the prompt packed alone, [CLS] prompt
    [SEP], cut at the max length; less its [SEP]). None where it leaves
    out none: include_prompt True, or no prompt ("")."""
    if self.include_prompt or not prompt:
      return None
    return prompt_tokens - 1

  def encode(self, texts, batch_size=32, prompt_name=None, prompt=None,
             truncate_dim=None):
    """Embeddings of a list of texts, as sentence-transformers' encode.

    The texts (each after its prompt, see prompt_of) are tokenised at
    once, sorted by length, and each batch runs at its own length
    (models.predictor.Predictor).

    Args:
      texts: a list (or any iterable) of str, or of bytes in UTF-8.
      batch_size: the most texts run at once.
      prompt_name, prompt: see prompt_of.
      truncate_dim: the first dimensions kept (an integer from 1 to
        dimension), or None: the model's truncate_dim.

    Returns:
      float32 numpy [len(texts), embedding_dimension(truncate_dim)], in
      the texts' order.
    """
    name = f"{type(self).__name__}.encode"
    require_preprocessor(self, name)
    check_positive_int(batch_size, "batch_size", name)
    texts = text_list(texts, name)
    prefix = self.prompt_of(prompt_name, prompt)
    dimension = self.embedding_dimension(truncate_dim)
    if not texts:
      return np.zeros((0, dimension), np.float32)
    features = text_features(self, texts, prefix)
    prompt_length = self.pooled_prompt_length(
        prefix, int(text_features(self, [""], prefix)["input_mask"].sum()))
    if prompt_length is not None:
      features["prompt_length"] = np.full(len(texts), prompt_length,
                                          np.int32)
    embeddings = self._prediction().predict(features, batch_size)
    return embeddings["embedding"][:, :dimension]


def _check_truncate_dim(truncate_dim, dimension, where):
  """truncate_dim as an int, or a ValueError naming it unless it is an
  integer from 1 to dimension."""
  if isinstance(truncate_dim, bool) or \
      not isinstance(truncate_dim, numbers.Integral) or \
      not 1 <= truncate_dim <= dimension:
    raise ValueError(f"{where}: truncate_dim={truncate_dim!r} must be an "
                     f"integer from 1 to the embedding's {dimension} "
                     "dimensions")
  return int(truncate_dim)
