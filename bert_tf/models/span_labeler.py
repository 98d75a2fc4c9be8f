"""BertSpanLabeler: run_squad's model, the encoder plus start/end logits;
with a BertSpanPreprocessor it answers questions about raw text and trains
on SQuAD-style records, as run_squad does."""

import keras
import numpy as np
import tensorflow as tf
from keras import ops

from bert_tf.layers.classification_head import ClassificationHead
from bert_tf.models import targets
from bert_tf.models.text_model import TextModel, checked_text, kind_of
from bert_tf.objectives.spans import SpanObjective
from bert_tf.text.squad import pipeline
from bert_tf.text.squad.preprocessor import BertSpanPreprocessor
from bert_tf.text.squad.answer_options import AnswerOptions
from bert_tf.wordpiece.rules import TRANSFORMERS_RULES

# predict's answer settings: run_squad's flags of the same names.
ANSWER_SETTINGS = ("n_best_size", "max_answer_length",
                   "version_2_with_negative", "null_score_diff_threshold")
# Questions (pipeline windows) answered at once where predict is given no
# batch_size.
_BATCH_SIZE = 32


@keras.saving.register_keras_serializable(package="bert_tf")
class BertSpanLabeler(TextModel):
  """The original run_squad's create_model.

  Two logits per token from the final hidden states, with output_weights
  [2, hidden_size] and output_bias [2] named cls/squad/output_weights and
  cls/squad/output_bias in checkpoints, as the original names them; no
  dropout on the hidden states (the original has none there).

  Args:
    config: a BertConfig (or its dict).
    preprocessor: an optional BertSpanPreprocessor (its max_seq_length,
      doc_stride and max_query_length are run_squad's flags). With one,
      predict((questions, contexts)) answers as run_squad and its export's
      serve_text do, and fit((questions, contexts), (answer_texts,
      answer_starts[, is_impossible])) trains on run_squad's features.
      from_pretrained gives one of max_seq_length 384 (run_squad's), or
      less where the position table or the tokenizer is shorter.

  Inputs: the encoder's dict (input_ids, input_mask, segment_ids); other
    keys are ignored. With a preprocessor also (questions, contexts),
    which it makes windows of.

  Outputs: a dict with start_logits and end_logits [batch_size (or
    windows), seq_length] (float32).

  Example:
    >>> from bert_tf.config import BertConfig
    >>> config = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=2,
    ...                     num_attention_heads=2, intermediate_size=32)
    >>> model = BertSpanLabeler(config)
    >>> model({"input_ids": ops.ones((2, 4), "int32")})["start_logits"].shape
    TensorShape([2, 4])
  """

  checkpoint_head_names = {
      "cls/squad/output_weights": "span_head.output_weights",
      "cls/squad/output_bias": "span_head.output_bias"}
  huggingface_architectures = ("BertForQuestionAnswering",)
  # Keras' targets: [batch_size, 2] of start and end positions, against
  # the start and end logits stacked, [batch_size, 2, seq_length].
  objective = SpanObjective()
  preprocessor_class = BertSpanPreprocessor

  def __init__(self, config, *, preprocessor=None, **kwargs):
    super().__init__(config, preprocessor=preprocessor, **kwargs)
    self.span_head = ClassificationHead(
        num_classes=2, initializer_range=self.config.initializer_range,
        name="squad")
    self._answer_functions = {}
    self.build()

  def build(self, input_shape=None):
    self.span_head.build((None, None, self.config.hidden_size))
    self.built = True

  def check_targets(self, x, y, where):
    """[examples, 2]: each example's start and end, positions in x."""
    shape = targets.input_shape(x, "input_ids")
    length = shape[-1] if shape else self.config.max_position_embeddings
    targets.check_class_ids(y, x, where, length,
                            f"positions (seq_length={length})",
                            [(None, 2)], "[examples, 2] (start, end)")

  def input_signature(self):
    """Ids, with a preprocessor too: the SavedModel that answers raw text
    is run_squad's export (serve_text)."""
    return self.ids_input_signature()

  def text_advice(self):
    return (f"{type(self).__name__}.from_pretrained(model_dir), or "
            "preprocessor=bert_tf.BertSpanPreprocessor(vocab_file), gives "
            "a model that takes (questions, contexts)")

  def call(self, inputs, training=None):
    sequence_output = self.encoder(self.encoder_inputs(inputs),
                                   training=training)["sequence_output"]
    # [batch_size, seq_length, 2]
    logits = ops.cast(self.span_head(sequence_output), "float32")
    return {"start_logits": logits[..., 0], "end_logits": logits[..., 1]}

  def predict(self, x, *args, **kwargs):
    """keras.Model.predict; given (questions, contexts), each a list of
    texts, run_squad's answer to each question (as its predictions.json and
    its export's serve_text), in a dict of arrays [questions]:
    answer (str), answer_start, answer_end (character offsets into the
    context, end exclusive; -1 where there is no answer), score (the
    answer's start + end logit); with version_2_with_negative also
    null_odds (null_odds.json's) and has_answer (null_odds <=
    null_score_diff_threshold; else the answer is "").

    Keyword arguments for text: batch_size (questions at once), verbose,
    and run_squad's n_best_size (20), max_answer_length (30),
    version_2_with_negative (False), null_score_diff_threshold (0.0).

    A model of transformers' tokenization rules (a Hugging Face folder's)
    answers instead as transformers 4's pipeline("question-answering")
    does (text.squad.pipeline), taking its arguments: top_k (1),
    handle_impossible_answer (False), max_answer_len (15), align_to_words
    (True), max_seq_len (the preprocessor's max_seq_length), doc_stride
    (min(max_seq_len // 2, 128)) and max_question_len (64, unused, as the
    pipeline's fast tokenizer leaves it); batch_size counts windows. It
    gives a list, per question, of the pipeline's {"score", "start",
    "end", "answer"}: that dict with top_k 1, else a list of up to top_k
    of them, best first. Each family's arguments are refused for the
    other's model.
    """
    settings = {name: kwargs.pop(name) for name in ANSWER_SETTINGS
                if name in kwargs}
    pipeline_settings = {name: kwargs.pop(name) for name in pipeline.DEFAULTS
                         if name in kwargs}
    if not self._holds_questions(x, "predict"):
      if settings or pipeline_settings:
        raise ValueError(f"{type(self).__name__}.predict: "
                         f"{', '.join({**settings, **pipeline_settings})} "
                         "answer questions; x is not (questions, contexts)")
      return super().predict(x, *args, **kwargs)
    batch_size = kwargs.pop("batch_size", args[0] if args else None)
    kwargs.pop("verbose", None)
    if args[1:] or kwargs:
      raise ValueError(f"{type(self).__name__}.predict: "
                       f"{', '.join(kwargs) or 'positional arguments'}: "
                       "not taken with (questions, contexts)")
    columns = self._question_columns(x, "predict")
    self._check_answer_family(settings, pipeline_settings)
    if self.preprocessor.tokenization_rules == TRANSFORMERS_RULES:
      return self._pipeline_answers(columns, batch_size, pipeline_settings)
    return self._answers(columns, batch_size, AnswerOptions(**settings))

  def fit(self, x=None, y=None, *args, **kwargs):
    """keras.Model.fit; given (questions, contexts) and (answer_texts,
    answer_starts[, is_impossible]), lists of SQuAD-style records, trains
    on run_squad's features of them (training_features), a
    sample_weight per record applying to each of its windows. Keras
    shuffles those features each epoch (run_squad through a buffer of
    100)."""
    x, y = self._records_as_features(x, y, kwargs, "fit")
    validation = kwargs.get("validation_data")
    if isinstance(validation, tuple) and validation and \
        self._holds_questions(validation[0], "fit"):
      kwargs["validation_data"] = self._records_as_features(
          *validation[:2], {}, "fit: validation_data's")
    return super().fit(x, y, *args, **kwargs)

  def evaluate(self, x=None, y=None, *args, **kwargs):
    """keras.Model.evaluate; on records too, as fit takes them."""
    x, y = self._records_as_features(x, y, kwargs, "evaluate")
    return super().evaluate(x, y, *args, **kwargs)

  def _holds_questions(self, x, method):
    """Whether x is (questions, contexts) of texts for a model that takes
    them: a tuple of two columns, not a dict of ids or a dataset."""
    if self.preprocessor is None or not isinstance(x, tuple) or len(x) != 2:
      return False
    self._check_not_bare_text(x, method)
    return all(isinstance(column, (list, np.ndarray)) or (
        isinstance(column, tf.Tensor) and column.dtype == tf.string)
               for column in x)

  def _question_columns(self, x, method):
    """(questions, contexts) as Python lists of str, checked."""
    columns = []
    for index, column in enumerate(x):
      if isinstance(column, tf.Tensor):
        column = column.numpy().tolist()
      elif isinstance(column, np.ndarray):
        column = column.tolist()
      where = f"x[{index}] ({('questions', 'contexts')[index]})"
      columns.append([_as_str(checked_text(
          text, f"{where}[{row}]", self._where(method)))
                      for row, text in enumerate(column)])
    if len(columns[0]) != len(columns[1]):
      raise ValueError(f"{self._where(method)}: {len(columns[0])} questions "
                       f"and {len(columns[1])} contexts; expected one "
                       "context per question")
    if not columns[0]:
      raise ValueError(f"{self._where(method)}: x holds no questions")
    return columns

  def _answers(self, columns, batch_size, options):
    """_answer_function's outputs for every question, a batch at a time,
    as numpy arrays (answer as str)."""
    batch_size = batch_size or _BATCH_SIZE
    answer = self._answer_function(options)
    batches = [answer(tf.constant(columns[0][start:start + batch_size],
                                  tf.string),
                      tf.constant(columns[1][start:start + batch_size],
                                  tf.string))
               for start in range(0, len(columns[0]), batch_size)]
    results = {name: np.concatenate([batch[name].numpy()
                                     for batch in batches])
               for name in batches[0]}
    results["answer"] = np.array([text.decode("utf-8")
                                  for text in results["answer"]], object)
    return results

  def _check_answer_family(self, settings, pipeline_settings):
    """Refuses the arguments of the decoding this model does not answer
    by: run_squad's for transformers' rules, the pipeline's otherwise."""
    where = self._where("predict")
    if self.preprocessor.tokenization_rules == TRANSFORMERS_RULES:
      if settings:
        raise ValueError(
            f"{where}: {next(iter(settings))}= is run_squad's; a model of "
            "transformers' tokenization rules answers as transformers' "
            "question-answering pipeline, which takes "
            f"{', '.join(pipeline.DEFAULTS)}")
    elif pipeline_settings:
      raise ValueError(
          f"{where}: {next(iter(pipeline_settings))}= is transformers' "
          "question-answering pipeline's; a model of the original's "
          "tokenization rules answers as run_squad, which takes "
          f"{', '.join(ANSWER_SETTINGS)}")

  def _pipeline_answers(self, columns, batch_size, settings):
    """transformers' question-answering pipeline's answers
    (text.squad.pipeline) to every question, windows batch_size at a
    time."""
    where = self._where("predict")
    max_seq_len, doc_stride, options = pipeline.checked_settings(
        settings, self.preprocessor.max_seq_length,
        self.config.max_position_embeddings, where)
    for column, name in enumerate(("questions", "contexts")):
      for row, text in enumerate(columns[column]):
        if not text:
          raise ValueError(f"{where}: x[{column}] ({name})[{row}] is empty; "
                           "the pipeline takes non-empty questions and "
                           "contexts")
    windows = self.preprocessor.pipeline_windows(*columns, max_seq_len,
                                                 doc_stride, where)
    logits = self._window_logits(
        [window for question in windows for window in question],
        max_seq_len, batch_size or _BATCH_SIZE)
    found = []
    for context, question_windows in zip(columns[1], windows):
      decoded = [(window, *(row[:len(window.input_ids)]
                            for row in next(logits)))
                 for window in question_windows]
      answers = pipeline.answers(context, decoded, options)
      found.append(answers[0] if options.top_k == 1 and answers
                   else answers)
    return found

  def _window_logits(self, windows, max_seq_len, batch_size):
    """An iterator of each window's (start_logits, end_logits) numpy
    [max_seq_len], the windows padded and run batch_size at a time."""
    for first in range(0, len(windows), batch_size):
      batch = windows[first:first + batch_size]
      inputs = {name: np.zeros([len(batch), max_seq_len], np.int32)
                for name in ("input_ids", "input_mask", "segment_ids")}
      for row, window in enumerate(batch):
        length = len(window.input_ids)
        inputs["input_ids"][row, :length] = window.input_ids
        inputs["input_mask"][row, :length] = 1
        inputs["segment_ids"][row, :length] = window.segment_ids
      outputs = self(inputs, training=False)
      yield from zip(outputs["start_logits"].numpy(),
                     outputs["end_logits"].numpy())

  def _answer_function(self, options):
    """The preprocessor's answer of this model, traced once per options."""
    function = self._answer_functions.get(options)
    if function is None:
      spec = tf.TensorSpec([None], tf.string)
      function = self._answer_functions[options] = tf.function(
          lambda questions, contexts: self.preprocessor.answer(
              lambda inputs: self(inputs, training=False), questions,
              contexts, options),
          input_signature=[spec, spec])
    return function

  def _records_as_features(self, x, y, kwargs, method):
    """(x, y) as Keras takes them: records (questions, contexts) and
    (answer_texts, answer_starts[, is_impossible]) as run_squad's features
    and their [features, 2] start and end positions, kwargs' per-record
    sample_weight per feature; anything else as it is."""
    if not self._holds_questions(x, method):
      return x, y
    where = self._where(method)
    questions, contexts = self._question_columns(x, method)
    answers = _answer_columns(y, len(questions), where)
    features, records = self.preprocessor.training_features(
        questions, contexts, *answers, where=where)
    weights = kwargs.get("sample_weight")
    if weights is not None:
      kwargs["sample_weight"] = np.asarray(weights)[records][
          features["example_index"]]
    return ({name: features[name] for name in
             ("input_ids", "input_mask", "segment_ids")},
            np.stack([features["start_positions"],
                      features["end_positions"]], axis=1))


def _as_str(text):
  return text.decode("utf-8") if isinstance(text, bytes) else text


def _answer_columns(y, count, where):
  """y's (answer_texts, answer_starts[, is_impossible]) as lists of one
  entry per record, checked."""
  if not isinstance(y, tuple) or len(y) not in (2, 3):
    raise ValueError(f"{where}: y is {kind_of(y)}; expected (answer_texts, "
                     "answer_starts) or (answer_texts, answer_starts, "
                     "is_impossible), one entry per question")
  columns = [list(column.tolist() if isinstance(column, np.ndarray)
                  else column) for column in y]
  for name, column in zip(("answer_texts", "answer_starts", "is_impossible"),
                          columns):
    if len(column) != count:
      raise ValueError(f"{where}: y's {name} has {len(column)} entries for "
                       f"{count} questions")
  return columns
