"""BertTagger: run_ner's fine-tuned tagger, as the paper's CoNLL-2003
experiments (§5.3), on ids or raw text (feature_tagger.py has the
feature-based one)."""

import keras
import numpy as np
import tensorflow as tf
from keras import ops

from bert_tf.layers.classification_head import ClassificationHead
from bert_tf.layers.dropout import Dropout
from bert_tf.models import fit_inputs, targets
from bert_tf.models.argument_checks import check_labels, check_positive_int
from bert_tf.models.text_model import TextModel, checked_text, kind_of
from bert_tf.objectives.tagging import TaggingObjective
from bert_tf.text.ner import pipeline
from bert_tf.text.ner.preprocessor import BertTaggerPreprocessor
from bert_tf.wordpiece.rules import TRANSFORMERS_RULES

# predict's default aggregation_strategy: the tagger's own entities, or,
# for a model of transformers' tokenization rules (a Hugging Face
# folder's), the pipeline's "first".
_DEFAULT = object()
# transformers' pipeline arguments bert_tf's tagger does not take.
_PIPELINE_ONLY = ("stride", "offset_mapping", "is_split_into_words",
                  "delimiter")
# Keras predict's arguments that raw text takes (verbose is ignored).
_TEXT_PREDICT_ARGUMENTS = ("batch_size", "verbose")
_TEXT_BATCH_SIZE = 32


def check_tags(model, x, y, where):
  """A tag id from 0 to num_labels - 1 for each of x's positions (pad's
  too: sample_weight=input_mask leaves them out)."""
  shape = targets.input_shape(x, "input_ids")
  targets.check_class_ids(
      y, x, where, model.num_labels,
      f"tag ids (num_labels={model.num_labels})",
      [(None, shape[-1] if shape else None)], "[examples, seq_length]",
      getattr(model, "labels", None))


def tag_outputs(head, features):
  """{logits, probabilities} [batch, seq, labels] (float32)."""
  logits = ops.cast(head(features), "float32")
  return {"logits": logits, "probabilities": ops.softmax(logits, axis=-1)}


@keras.saving.register_keras_serializable(package="bert_tf")
class BertTagger(TextModel):
  """The encoder fine-tuned, one dense layer over every position's final
  hidden state (dropout hidden_dropout_prob before it), no CRF.

  Checkpoint head: cls/ner/output_weights [num_labels, hidden_size] and
  cls/ner/output_bias [num_labels], named as run_squad's cls/squad head.

  Args:
    config: a BertConfig (or its dict).
    num_labels: the number of tags.
    preprocessor: an optional BertTaggerPreprocessor (see TextModel); the
      model then takes raw text and (words, tags) examples.
    labels: the tags' names in row order (IOB2 for entities), or None;
      with them a checkpoint whose head names its own labels loads its
      rows by name (model_weights.load_checkpoint). Raw text and tags
      need them.

  Inputs: the encoder's dict; or, with a preprocessor, texts (a [batch]
    string tensor), each tagged as run_ner tags a sentence
    (text.ner.tagging).
  Outputs: logits and probabilities [batch_size, seq_length, num_labels];
    for texts, serve_text's words, tags and entities (tagging.tag_texts).

  Example:
    >>> from bert_tf.config import BertConfig
    >>> config = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=2,
    ...                     num_attention_heads=2, intermediate_size=32)
    >>> model = BertTagger(config, num_labels=9)
    >>> model({"input_ids": ops.ones((2, 4), "int32")})["logits"].shape
    TensorShape([2, 4, 9])
  """

  checkpoint_head_names = {"cls/ner/output_weights": "tag_head.output_weights",
                           "cls/ner/output_bias": "tag_head.output_bias"}
  huggingface_architectures = ("BertForTokenClassification",)
  objective = TaggingObjective()
  preprocessor_class = BertTaggerPreprocessor

  config_arguments = ("num_labels", "labels")

  def __init__(self, config, num_labels, *, preprocessor=None, labels=None,
               **kwargs):
    super().__init__(config, preprocessor=preprocessor, **kwargs)
    check_positive_int(num_labels, "num_labels", type(self).__name__)
    check_labels(labels, num_labels, type(self).__name__)
    self.num_labels = num_labels
    self.labels = None if labels is None else list(labels)
    self.dropout = Dropout(self.config.hidden_dropout_prob)
    self.tag_head = ClassificationHead(
        num_classes=num_labels, initializer_range=self.config.initializer_range,
        name="ner")
    self._tag_function = None
    self.build()

  def build(self, input_shape=None):
    self.tag_head.build((None, None, self.config.hidden_size))
    self.built = True

  def check_targets(self, x, y, where):
    check_tags(self, x, y, where)

  def call(self, inputs, training=None):
    if self.preprocessor is not None and not isinstance(inputs, dict):
      return self.preprocessor.tag(self._tag_ids,
                                   self._label_names("model"), inputs)
    return self._tag_ids(inputs, training)

  def _tag_ids(self, inputs, training=None):
    sequence_output = self.encoder(inputs, training=training)[
        "sequence_output"]
    return tag_outputs(self.tag_head,
                        self.dropout(sequence_output, training=training))

  def _label_names(self, method):
    if self.labels is None:
      raise ValueError(f"{self._where(method)}: the model has no labels "
                       "(BertTagger(..., labels=[...])); tags and entities "
                       "need their names")
    return self.labels

  def fit(self, x=None, y=None, *args, **kwargs):
    """keras.Model.fit; with a preprocessor, x may be lists of words and y
    their tags (the model's labels): each sentence becomes run_ner's
    features (BertTaggerPreprocessor.features, its windows of long
    sentences included; batch_size counts those sequences), trained on
    each word's first piece (label_mask as the sample weight); so may
    validation_data's."""
    x, y, kwargs = self._tagged_examples(x, y, kwargs, "fit")
    return super().fit(x, y, *args, **kwargs)

  def evaluate(self, x=None, y=None, *args, **kwargs):
    """keras.Model.evaluate; lists of words and their tags as fit takes
    them."""
    x, y, kwargs = self._tagged_examples(x, y, kwargs, "evaluate")
    return super().evaluate(x, y, *args, **kwargs)

  def _tagged_examples(self, x, y, kwargs, method):
    """(x, y, kwargs) with (words, tags) examples as features, label ids
    and their label_mask as sample_weight; others as they are."""
    validation = kwargs.get("validation_data")
    if isinstance(validation, tuple) and len(validation) == 2 and \
        self._holds_word_lists(validation[0]):
      kwargs = {**kwargs, "validation_data": self._features_of(
          *validation, method, "validation_data's ")}
    if not self._holds_word_lists(x):
      return x, y, kwargs
    if kwargs.get("sample_weight") is not None:
      raise ValueError(f"{self._where(method)}: sample_weight with lists of "
                       "words; each word's first piece weighs 1")
    x, y, weights = self._features_of(x, y, method)
    return x, y, {**kwargs, "sample_weight": weights}

  def _holds_word_lists(self, x):
    return self.preprocessor is not None and isinstance(x, (list, tuple)) \
        and bool(x) and all(isinstance(words, (list, tuple)) for words in x)

  def _features_of(self, sentences, tags, method, where=""):
    """(ids, label ids, label_mask) of lists of words and their tags."""
    name = f"{self._where(method)}: {where}"
    labels = self._label_names(method)
    label_ids = {label: index for index, label in enumerate(labels)}
    if not isinstance(tags, (list, tuple)) or len(tags) != len(sentences):
      raise ValueError(f"{name}y is {kind_of(tags)} of "
                       f"{len(tags) if isinstance(tags, (list, tuple)) else 0}"
                       f" items; expected a list of tags for each of x's "
                       f"{len(sentences)} lists of words")
    ids = []
    for index, (words, sentence_tags) in enumerate(zip(sentences, tags)):
      _check_words(words, f"{name}x[{index}]")
      if not isinstance(sentence_tags, (list, tuple)) or \
          len(sentence_tags) != len(words):
        raise ValueError(f"{name}y[{index}] is not a list of {len(words)} "
                         f"tags, one for each word of x[{index}]")
      for position, tag in enumerate(sentence_tags):
        if tag not in label_ids:
          raise ValueError(f"{name}y[{index}][{position}] is {tag!r}, not "
                           f"one of the model's labels: {', '.join(labels)}")
      ids.append([label_ids[tag] for tag in sentence_tags])
    features = self.preprocessor.features(
        [list(words) for words in sentences], ids)
    return ({key: features[key] for key in
             ("input_ids", "input_mask", "segment_ids")},
            features["label_ids"], features["label_mask"])

  def predict(self, x, *args, aggregation_strategy=_DEFAULT,
              ignore_labels=None, **kwargs):
    """keras.Model.predict; with a preprocessor, for a list of texts, each
    text's entities:

    - aggregation_strategy None (the default, except as below): the
      tagger's own, as the export's serve_text reads them: [{"text",
      "label", "start", "end"}] (label the entity type; character offsets
      into the text, end exclusive);
    - aggregation_strategy "first" (the default for a model of
      transformers' tokenization rules: a Hugging Face folder's), "max",
      "average", "simple" or "none": transformers' token-classification
      pipeline's [{"entity_group", "score", "word", "start", "end"}]
      ("none": each piece's {"entity", "score", "index", "word", "start",
      "end"}), each text one sequence of its first max_seq_length - 2
      pieces as the pipeline truncates (text.ner.pipeline);
      ignore_labels as the pipeline's (["O"]).

    batch_size (32) is the texts per call of the model. The pipeline's
    stride, offset_mapping, is_split_into_words and delimiter are
    refused.
    """
    refused = [name for name in _PIPELINE_ONLY if name in kwargs]
    if refused:
      raise ValueError(f"{self._where('predict')}: {refused[0]}= is an "
                       "argument of transformers' pipeline that bert_tf's "
                       "tagger does not take; it takes aggregation_strategy "
                       "and ignore_labels")
    if self.preprocessor is None or isinstance(x, dict) or \
        not fit_inputs.holds_text(x):
      if aggregation_strategy is not _DEFAULT or ignore_labels is not None:
        raise ValueError(f"{self._where('predict')}: aggregation_strategy "
                         "and ignore_labels apply to raw text, given to a "
                         "model with a preprocessor")
      return super().predict(x, *args, **kwargs)
    return self._predict_entities(x, args, kwargs, aggregation_strategy,
                                  ignore_labels)

  def _predict_entities(self, x, args, kwargs, strategy, ignore_labels):
    where = self._where("predict")
    unknown = sorted(set(kwargs) - set(_TEXT_PREDICT_ARGUMENTS))
    if args or unknown:
      raise ValueError(f"{where}: texts take batch_size (and verbose) "
                       f"alone, not {unknown[0] if unknown else 'more'} "
                       "arguments")
    batch_size = kwargs.get("batch_size") or _TEXT_BATCH_SIZE
    check_positive_int(batch_size, "batch_size", where)
    texts = self._checked_texts(x)
    rules = self.preprocessor.tokenization_rules
    if strategy is _DEFAULT:
      strategy = "first" if rules == TRANSFORMERS_RULES else None
    if strategy is not None:
      strategy = pipeline.check_strategy(strategy, where)
    elif ignore_labels is not None:
      raise ValueError(f"{where}: ignore_labels applies to the pipeline's "
                       "aggregation strategies; the tagger's own entities "
                       "leave O out")
    self._label_names("predict")
    found = []
    for start in range(0, len(texts), batch_size):
      batch = texts[start:start + batch_size]
      if strategy is None:
        found += self._own_entities(batch)
      else:
        found += self._pipeline_entities(
            batch, strategy, ("O",) if ignore_labels is None
            else tuple(ignore_labels))
    return found

  def _checked_texts(self, x):
    """x as a list of str: each text checked, bytes decoded (offsets are
    characters of the text), transformers' special tokens refused."""
    where = self._where("predict")
    self._check_not_bare_text(x, "predict")
    if isinstance(x, np.ndarray) and x.ndim == 1:
      x = x.tolist()
    if not isinstance(x, (list, tuple)):
      raise ValueError(f"{where}: x is {kind_of(x)}; expected a list of "
                       "texts")
    texts = []
    for index, text in enumerate(x):
      text = checked_text(text, f"x[{index}]", where)
      if isinstance(text, bytes):
        try:
          text = text.decode("utf-8")
        except UnicodeDecodeError:
          raise ValueError(f"{where}: x[{index}] is not valid UTF-8") \
              from None
      token = self.preprocessor.kept_whole(text)
      if token is not None:
        raise ValueError(f"{where}: x[{index}] holds {token!r}, a token "
                         "transformers keeps whole; the tagger splits words "
                         "as the original does")
      texts.append(text)
    return texts

  def _own_entities(self, texts):
    """[{text, label, start, end}] of each text (serve_text's)."""
    if self._tag_function is None:
      self._tag_function = tf.function(
          lambda batch: self.preprocessor.tag(self._tag_ids, self.labels,
                                              batch),
          input_signature=[tf.TensorSpec([None], tf.string)])
    tagged = self._tag_function(tf.constant(texts, tf.string,
                                            shape=[len(texts)]))
    found = []
    for row, text in enumerate(texts):
      starts = tagged["entity_start"][row].numpy().tolist()
      ends = tagged["entity_end"][row].numpy().tolist()
      kinds = tagged["entity_type"][row].numpy().tolist()
      found.append([{"text": text[start:end], "label": kind.decode("utf-8"),
                     "start": start, "end": end}
                    for kind, start, end in zip(kinds, starts, ends)
                    if start >= 0])
    return found

  def _pipeline_entities(self, texts, strategy, ignore_labels):
    """The pipeline's entities of each text (pipeline.entities)."""
    inputs, pieces = self.preprocessor.pipeline_sequences(
        tf.constant(texts, tf.string, shape=[len(texts)]))
    probabilities = self._tag_ids(inputs, training=False)[
        "probabilities"].numpy()
    return [pipeline.entities(text, text_pieces,
                              probabilities[row, 1:1 + len(text_pieces)],
                              self.labels, strategy, ignore_labels)
            for row, (text, text_pieces) in enumerate(zip(
                texts, self.preprocessor.pipeline_pieces(pieces)))]


def _check_words(words, where):
  """Raises ValueError unless words is a non-empty list of words (str
  holding more than whitespace)."""
  if not words:
    raise ValueError(f"{where} has no words; expected a list of words")
  for position, word in enumerate(words):
    if not isinstance(word, str):
      raise ValueError(f"{where}[{position}] is {kind_of(word)}; expected "
                       "a word (a str)")
    if not word.strip():
      raise ValueError(f"{where}[{position}] is {word!r}; expected a word")
