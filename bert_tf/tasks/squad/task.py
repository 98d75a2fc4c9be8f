"""SQuAD v1.1 and v2.0 as a fine-tuning task: run_squad's task.

Examples are read from the official JSON files (examples.py), turned into
doc_stride windows as the original (features.py), the model is
the original's start/end head (BertSpanLabeler), and the logits become
predictions.json, nbest_predictions.json and, for v2.0, null_odds.json, as
the original's write_predictions (answers.py). A predict_file with answers
(a dev set) is also scored with the official metrics, the best null
threshold included (metrics.py).
"""

from bert_tf.models.span_labeler import BertSpanLabeler
from bert_tf.objectives.spans import SpanObjective
from bert_tf.tasks.squad import answers, examples, metrics
from bert_tf.tasks.squad.serving import (MAX_SERVING_CONTEXT_LENGTH,
                                         squad_serving)
from bert_tf.tasks.task import FineTuningTask
from bert_tf.text.squad import features
from bert_tf.text.squad.answer_options import AnswerOptions

# What predicting writes: null_odds.json with --version_2_with_negative.
_PREDICTION_FILES = ("predictions.json", "nbest_predictions.json",
                     "null_odds.json")


class SquadTask(FineTuningTask):
  """Training on --train_file, predicting (and scoring) --predict_file.

  Args:
    train_file: SQuAD JSON to train on (train-v1.1.json), or None.
    predict_file: SQuAD JSON to predict (dev-v1.1.json), or None.
    doc_stride: the original's flag: how far apart windows start.
    max_query_length: the original's flag: question pieces kept.
    answer_options: answer_options.AnswerOptions (n_best_size,
      max_answer_length, version_2_with_negative,
      null_score_diff_threshold, verbose_logging).
    max_serving_context_length: the most characters of context the
      export's serve_text answers (serving.SquadServing).
  """

  name = "squad"
  eval_splits = ()
  predict_splits = ("predict",)
  objective = SpanObjective()
  exports = True
  # The original takes each window's n_best_size highest start and end
  # logits over all of max_seq_length, padding included: a padding
  # position among them leaves a real one out of the n-best list.
  predicts_at_full_length = True

  def __init__(self, train_file, predict_file, doc_stride=128,
               max_query_length=64, answer_options=None,
               max_serving_context_length=MAX_SERVING_CONTEXT_LENGTH):
    self.files = {"train": ("--train_file", train_file),
                  "predict": ("--predict_file", predict_file)}
    self.doc_stride = doc_stride
    self.max_query_length = max_query_length
    self.answer_options = answer_options or AnswerOptions()
    self.max_serving_context_length = max_serving_context_length

  @property
  def version_2_with_negative(self):
    return self.answer_options.version_2_with_negative

  def input_files(self, split):
    return [self.files[split]]

  def read_examples(self, split):
    flag, path = self.files[split]
    if not path:
      raise ValueError(f"If `do_{split}` is True, then `{flag[2:]}` must be "
                       f"specified.")
    return examples.read_squad_examples(path, split == "train",
                                        self.version_2_with_negative, flag)

  def convert_examples(self, split, split_examples, tokenizer,
                       max_seq_length):
    return features.convert_examples_to_features(
        split_examples, tokenizer, max_seq_length, self.doc_stride,
        self.max_query_length, is_training=split == "train")

  def feature_records(self, split):
    """train.tf_record and eval.tf_record, as the original writes them."""
    if split == "train":
      return "train.tf_record", features.TRAIN_RECORD_FEATURES
    return "eval.tf_record", features.PREDICT_RECORD_FEATURES

  def build_model(self, config):
    return BertSpanLabeler(config)

  def decode(self, split, data, outputs, tokenizer):
    """The original's answers (answers.SquadAnswers): predictions, n-best
    lists and, for v2.0, null odds."""
    return answers.predict_answers(
        data.examples, data.features, outputs["start_logits"],
        outputs["end_logits"], tokenizer, self.answer_options)

  def can_score(self, split, split_examples):
    if self.version_2_with_negative:
      return examples.has_gold_answers(split_examples)
    return all(example.gold_answers for example in split_examples)

  def evaluate(self, split, data, predictions, batch_size):
    if not self.version_2_with_negative:
      return metrics.squad_v1_metrics(data.examples, predictions.predictions)
    return metrics.squad_v2_metrics(
        data.examples, predictions.predictions, predictions.null_odds,
        predictions.best_non_null)

  def prediction_files(self, split):
    return _PREDICTION_FILES if self.version_2_with_negative \
        else _PREDICTION_FILES[:2]

  def output_set(self, split):
    """null_odds.json too: a v1.1 run's predictions replace a v2.0 run's."""
    return (*_PREDICTION_FILES, self.eval_results_file(split))

  def write_predictions(self, split, data, predictions, files):
    parts = [predictions.predictions, predictions.nbest]
    if self.version_2_with_negative:
      parts.append(predictions.null_odds)
    for part, writer in zip(parts, files):
      answers.write_json(part, writer)

  def serving(self, model, tokenizer, max_seq_length):
    return squad_serving(
        model, tokenizer, max_seq_length, self.doc_stride,
        self.max_query_length, self.answer_options,
        self.max_serving_context_length)
