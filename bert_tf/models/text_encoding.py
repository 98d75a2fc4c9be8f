"""What the models that encode texts (BertEmbedder, BertSparseEncoder)
share: training on text columns, their prompts, the texts they take, and
the features those texts give."""

import numpy as np
import tensorflow as tf
from keras import ops
from scipy import spatial

from bert_tf.models.predictor import Predictor
from bert_tf.models.text_model import TextModel, checked_text, kind_of


class TextEncoderModel(TextModel):
  """A TextModel that embeds texts: {"embedding": [batch, dim]} of a text
  column (embed), [batch, k, dim] of a tuple of k columns (a training
  batch of anchors, positives, ...), trained by a loss without targets
  (the positives are the batch's other columns)."""

  def embed(self, inputs, training=None):
    """{"embedding": float32 [batch, dim]} of one column."""
    raise NotImplementedError

  def token_outputs(self, inputs, training=None):
    """(the encoder's inputs, its sequence_output, the input mask: all
    ones where the inputs have none) of one column."""
    inputs = self.encoder_inputs(inputs)
    sequence_output = self.encoder(inputs, training=training)[
        "sequence_output"]
    input_mask = inputs.get("input_mask")
    if input_mask is None:
      input_mask = ops.ones_like(inputs["input_ids"])
    return inputs, sequence_output, input_mask

  def _prediction(self):
    """The Predictor encode() runs, made once (it holds the traced
    function; a subclass sets _predictor to None in its constructor);
    each batch at its longest text's own length."""
    if self._predictor is None:
      self._predictor = Predictor(tf.distribute.get_strategy(), self,
                                  round_lengths=False)
    return self._predictor

  def save_pretrained(self, directory, format="sentence-transformers",
                      vocab_file=None, architecture=None):
    """Writes a sentence-transformers folder (today's layout) that
    sentence-transformers loads with the same embeddings; see
    BertKerasModel.save_pretrained."""
    super().save_pretrained(directory, format, vocab_file, architecture)

  def call(self, inputs, training=None):
    if isinstance(inputs, (tuple, list)):
      return {"embedding": ops.stack(
          [self.embed(column, training)["embedding"] for column in inputs],
          axis=1)}
    return self.embed(inputs, training)

  def target_output(self, outputs):
    return outputs["embedding"]

  def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None,
                   training=True):
    # A contrastive loss has no targets: Keras needs some y to pass its
    # loss.
    if y is None:
      y = ops.zeros(ops.shape(self.target_output(y_pred))[:1])
    return super().compute_loss(x, y, y_pred, sample_weight, training)

  def similarity_scores(self, first, second):
    """[len(first), len(second)] similarities of two sets of embeddings by
    the model's similarity, as sentence-transformers' similarity: cosine,
    dot, or minus the euclidean or manhattan distance. An embedding [dim]
    counts as a set of one; a tf.SparseTensor (a sparse encoder's) is
    taken dense."""
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


def checked_prompts(prompts, default_prompt_name, model_name, implicit=()):
  """(prompts as a dict of str to str, default_prompt_name), or a
  ValueError naming the first that is not one, or a default that names no
  prompt (nor one of the `implicit` names: a prompt a model has as "")."""
  prompts = dict(prompts or {})
  for prompt_name, text in prompts.items():
    if not isinstance(prompt_name, str):
      raise ValueError(f"{model_name}: prompts has a name {prompt_name!r}; "
                       "expected a str")
    checked_prompt(text, f"prompts[{prompt_name!r}]", model_name)
  if default_prompt_name is not None and \
      default_prompt_name not in (*prompts, *implicit):
    raise ValueError(f"{model_name}: default_prompt_name "
                     f"{default_prompt_name!r} is not one of the prompts "
                     f"({', '.join(prompts) or 'none'})")
  return prompts, default_prompt_name


def prompt_text(model, prompt_name, prompt, implicit=()):
  """The text a model's encode prefixes: `prompt` if given, else the
  prompt named, else its default prompt's, else none (""); a name in
  `implicit` that the model has no prompt of gives ""."""
  model_name = type(model).__name__
  if prompt is not None:
    return checked_prompt(prompt, "prompt", model_name)
  name = prompt_name if prompt_name is not None else \
      model.default_prompt_name
  if name is None or (name in implicit and name not in model.prompts):
    return ""
  if not isinstance(name, str) or name not in model.prompts:
    raise ValueError(f"{model_name}: prompt_name={name!r} is not one of "
                     f"its prompts ({', '.join(model.prompts) or 'none'})")
  return model.prompts[name]


def checked_prompt(prompt, argument, model_name):
  """prompt, or a ValueError naming the argument unless it is a str UTF-8
  can encode."""
  if not isinstance(prompt, str):
    raise ValueError(f"{model_name}: {argument}={prompt!r}; expected a str")
  return checked_text(prompt, argument, model_name)


def require_preprocessor(model, method_name):
  """Raises ValueError where the model has no preprocessor."""
  if model.preprocessor is None:
    raise ValueError(f"{method_name}: the model has no preprocessor to "
                     "tokenise text with")


def text_features(model, texts, prefix):
  """The features of `prefix` + each text, tokenised at once by the
  model's preprocessor, numpy, with is_real_example: what a Predictor
  runs."""
  features = {key: value.numpy() for key, value in model.preprocessor(
      tf.constant([prefix + text for text in texts])).items()}
  features["is_real_example"] = np.ones(len(texts), np.int32)
  return features


def text_list(texts, method_name):
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


# scipy's name of each distance similarity_scores negates.
_DISTANCE_METRICS = {"euclidean": "euclidean", "manhattan": "cityblock"}
# The float64 distances computed at once: 32 MB.
_DISTANCE_BLOCK = 1 << 22


def _embedding_rows(embeddings, argument, method_name):
  """embeddings as float32 numpy [n, dim] (one embedding [dim] as [1,
  dim]), or a ValueError naming the argument."""
  if isinstance(embeddings, tf.SparseTensor):
    embeddings = tf.sparse.to_dense(embeddings).numpy()
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
