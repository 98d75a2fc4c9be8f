"""BertSpanPreprocessor: questions and contexts to run_squad's windows, and
SQuAD-style records to its training features, as a Keras layer."""

import numbers

import keras
import numpy as np
import tensorflow as tf

from bert_tf import tokenization
from bert_tf.text import offsets
from bert_tf.text.preprocessor import BertPreprocessor, is_number
from bert_tf.text.squad import answering, pipeline
from bert_tf.text.squad.examples import Paragraph, SquadExample, answer_words
from bert_tf.text.squad.features import convert_examples_to_features
from bert_tf.text.squad.windows import doc_stride_windows
from bert_tf.wordpiece import rules

# run_squad's flags' defaults.
MAX_SEQ_LENGTH, DOC_STRIDE, MAX_QUERY_LENGTH = 384, 128, 64


@keras.saving.register_keras_serializable(package="bert_tf")
class BertSpanPreprocessor(BertPreprocessor):
  """(questions, contexts) -> run_squad's doc_stride windows.

  Each question and its context become [CLS] question [SEP] window [SEP]
  for every window of the context, as run_squad's features (tested equal):
  the question cut to max_query_length pieces, windows of max_seq_length -
  len(question) - 3 pieces starting doc_stride apart, each piece's
  max-context window marked. BertSpanLabeler answers from them
  (answer) and trains on SQuAD-style records through run_squad's own
  feature creation (training_features).

  Answers are character offsets into the context, which follow the
  original's tokenization rules (bert_tf.text.offsets). A preprocessor of
  transformers' rules (a Hugging Face folder's) makes transformers'
  question-answering pipeline's windows instead (pipeline_windows), and
  refuses run_squad's answers and features.

  Args:
    vocab_file, do_lower_case, vocab_size, tokenization_rules: as
      BertPreprocessor.
    max_seq_length: each window's length (run_squad's 384).
    doc_stride: how far apart windows start (run_squad's 128).
    max_query_length: the question pieces kept: run_squad's 64, or by
      default, where max_seq_length is under 68, max_seq_length - 4 (room
      for one context piece).

  Call: a pair (questions, contexts) of string tensors [batch]. Returns a
    dict, a row per window (the windows of each question together, in
    order): input_ids, input_mask, segment_ids int32 [windows,
    max_seq_length]; example_index int64 [windows], the question's row;
    doc_index [windows, max_seq_length], the context piece at each
    position (-1 elsewhere); is_max_context bool.
  """

  # from_pretrained's default length: run_squad's, where the position
  # table and the tokenizer's model_max_length allow it.
  default_max_seq_length = MAX_SEQ_LENGTH

  def __init__(self, vocab_file=None, do_lower_case=True,
               max_seq_length=MAX_SEQ_LENGTH, vocab_size=None,
               tokenization_rules=rules.ORIGINAL_RULES, *,
               doc_stride=DOC_STRIDE, max_query_length=None, **kwargs):
    super().__init__(vocab_file, do_lower_case, max_seq_length, vocab_size,
                     tokenization_rules, **kwargs)
    if max_query_length is None:
      max_query_length = min(MAX_QUERY_LENGTH, self.max_seq_length - 4)
    _check_lengths(self.max_seq_length, doc_stride, max_query_length)
    self.doc_stride = doc_stride
    self.max_query_length = max_query_length
    self._python_tokenizer = None

  @property
  def window_lengths(self):
    return answering.WindowLengths(self.max_seq_length, self.doc_stride,
                                   self.max_query_length)

  def call(self, inputs):
    questions, contexts = _question_pair(inputs)
    pieces = self.tokenizer(contexts)
    return doc_stride_windows(
        self.tokenizer(questions)[:, :self.max_query_length], pieces,
        self.max_seq_length, self.doc_stride,
        self.tokenizer.vocab[rules.CLS_TOKEN],
        self.tokenizer.vocab[rules.SEP_TOKEN])

  def compute_output_spec(self, inputs):
    windows = (None, self.max_seq_length)
    return {"input_ids": keras.KerasTensor(windows, dtype="int32"),
            "input_mask": keras.KerasTensor(windows, dtype="int32"),
            "segment_ids": keras.KerasTensor(windows, dtype="int32"),
            "example_index": keras.KerasTensor((None,), dtype="int64"),
            "doc_index": keras.KerasTensor(windows, dtype="int64"),
            "is_max_context": keras.KerasTensor(windows, dtype="bool")}

  def answer(self, model, questions, contexts, options):
    """run_squad's answers (answering.answer_questions) of a span model
    (ids -> start_logits, end_logits) to [batch] string tensors of
    questions and contexts, with answer_options.AnswerOptions."""
    self._check_text_rules("answer")
    return answering.answer_questions(model, self.tokenizer, questions,
                                      contexts, self.window_lengths, options)

  def pipeline_windows(self, questions, contexts, max_seq_len, doc_stride,
                       where):
    """[questions] lists of pipeline.Window: the windows transformers'
    question-answering pipeline makes of Python lists of questions and
    contexts (str), with its max_seq_len and doc_stride. A context
    holding a token transformers keeps whole is refused: its words are
    split as the original splits them."""
    for index, context in enumerate(contexts):
      token = offsets.kept_whole_token(self.tokenizer, context)
      if token is not None:
        raise ValueError(f"{where}: contexts[{index}] holds {token!r}, a "
                         "token transformers keeps whole; contexts are "
                         "split into words as the original splits them")
    question_ids = self.tokenizer(tf.constant(questions, tf.string)).to_list()
    tokenized = offsets.tokenize_words(
        self.tokenizer, tf.constant(contexts, tf.string),
        ends_over_dropped=False)
    vocab = self.tokenizer.vocab
    return [pipeline.windows(
        ids, [(piece, start, end, word)
              for word, pieces in enumerate(zip(*context_pieces))
              for piece, start, end in zip(*pieces)],
        max_seq_len, doc_stride, vocab[rules.CLS_TOKEN],
        vocab[rules.SEP_TOKEN], f"{where}: question {index}")
            for index, (ids, *context_pieces) in enumerate(zip(
                question_ids, *(column.to_list() for column in (
                    tokenized.ids, tokenized.starts, tokenized.ends))))]

  def training_features(self, questions, contexts, answer_texts,
                        answer_starts, is_impossible=None, where="records"):
    """run_squad's training features (features.convert_examples_to_
    features, numpy arrays a row per window) of SQuAD-style records:
    Python lists of a question, its context, its answer's text and
    character start, and whether it has none (v2.0). A record whose answer
    the context's words do not contain is skipped with a warning, as
    run_squad skips it.

    Returns:
      (features, records): the features, and the index of each kept
      record (features' example_index counts those).

    Raises:
      ValueError: naming `where` and the record: an answer outside its
        context, a context without words, or no record left.
    """
    self._check_text_rules("training_features")
    examples, records = [], []
    paragraphs = {}
    for index, question in enumerate(questions):
      context = contexts[index]
      paragraph = paragraphs.get(context)
      if paragraph is None:
        paragraph = paragraphs[context] = Paragraph.from_context(context)
      if not paragraph.doc_tokens:
        raise ValueError(f"{where}: context {index} has no words to "
                         "answer from")
      example = SquadExample(str(index), question, paragraph,
                             is_impossible=bool(is_impossible is not None
                                                and is_impossible[index]))
      if example.is_impossible:
        example.orig_answer_text = ""
        example.start_position = example.end_position = -1
      else:
        words = _answer_words(paragraph, answer_texts[index],
                              answer_starts[index], f"{where}: record "
                              f"{index}")
        if words is None:
          continue
        example.orig_answer_text = answer_texts[index]
        example.start_position, example.end_position = words
      examples.append(example)
      records.append(index)
    if not examples:
      raise ValueError(f"{where}: no record's answer is found in its "
                       "context's words: nothing to train on")
    return convert_examples_to_features(
        examples, self._tokenizer(), self.max_seq_length, self.doc_stride,
        self.max_query_length, is_training=True), np.array(records)

  def _tokenizer(self):
    """The Python tokenizer of the same vocabulary and casing
    (tokenization.FullTokenizer, run_squad's), made once."""
    if self._python_tokenizer is None:
      self._python_tokenizer = tokenization.FullTokenizer(
          self.tokenizer.vocabulary, self.do_lower_case)
    return self._python_tokenizer

  def _check_text_rules(self, method):
    if self.tokenization_rules != rules.ORIGINAL_RULES:
      raise ValueError(
          f"BertSpanPreprocessor.{method}: run_squad's answers and features "
          "follow the original's tokenization rules, and this preprocessor "
          f"follows {self.tokenization_rules}' (a Hugging Face folder's); "
          "give the model ids, or tokenization_rules='original'")

  def get_config(self):
    config = super().get_config()
    config.update(doc_stride=self.doc_stride,
                  max_query_length=self.max_query_length)
    return config


def _check_lengths(max_seq_length, doc_stride, max_query_length):
  """Raises ValueError for lengths the windows cannot be made with."""
  for name, value in (("doc_stride", doc_stride),
                      ("max_query_length", max_query_length)):
    if not is_number(value, numbers.Integral) or value < 1:
      raise ValueError(f"BertSpanPreprocessor: {name}={value!r}; expected "
                       "an integer of at least 1")
  if max_seq_length <= max_query_length + 3:
    raise ValueError(f"BertSpanPreprocessor: max_seq_length={max_seq_length} "
                     f"must be more than max_query_length + 3 "
                     f"({max_query_length + 3})")


def _question_pair(inputs):
  if not isinstance(inputs, (tuple, list)) or len(inputs) != 2:
    raise ValueError("BertSpanPreprocessor takes a pair (questions, "
                     "contexts)")
  return inputs


def _answer_words(paragraph, text, start, where):
  """answer_words of a record's answer, once checked to lie inside its
  context."""
  if not isinstance(text, str) or not text:
    raise ValueError(f"{where}: its answer text is {text!r}; expected a "
                     "non-empty str (or is_impossible)")
  if not is_number(start, numbers.Integral) or not 0 <= start or \
      start + len(text) > len(paragraph.context):
    raise ValueError(f"{where}: answer_start {start!r} (text of {len(text)} "
                     f"characters) is outside its context of "
                     f"{len(paragraph.context)} characters")
  return answer_words(paragraph, text, int(start))
