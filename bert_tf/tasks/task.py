"""What a fine-tuning task is: everything specific to it, nothing else.

The runner (tasks/runner.py) drives any task through the same steps: read
every split the run needs, turn examples into features, train, evaluate,
predict, export. A task says what differs: where its examples come from,
how they become features, its model, its objective, its metrics, its
prediction files and its serving signatures. A new task subclasses
FineTuningTask in a package of its own; tasks/swag/ is the smallest.
"""

import abc
import dataclasses


@dataclasses.dataclass
class SplitData:
  """A split as the runner holds it.

  Attributes:
    examples: what read_examples returned.
    features: what convert_examples made of them: {name: numpy array}, one
      row per feature.
  """
  examples: list
  features: dict


class FineTuningTask(abc.ABC):
  """The contract between a task and the runner.

  Attributes:
    train_split: the split trained on.
    eval_splits: the splits --do_eval evaluates, in order.
    predict_splits: the splits --do_predict predicts, in order.
    predicts_at_full_length: whether the runner predicts every feature at
      max_seq_length (unless asked to bucket by length), because decode
      reads the outputs at padding positions too: SQuAD's, as the original
      ranks every position of a window for its n-best list. Otherwise each
      batch is cut to its longest feature, which computes no outputs past
      it.
    exports: whether `serving` gives an export (--export_dir).
  """

  train_split = "train"
  eval_splits = ("dev",)
  predict_splits = ("test",)
  predicts_at_full_length = False
  exports = False

  @abc.abstractmethod
  def input_files(self, split):
    """[(flag, path)]: the files a split is read from, which no output of
    the run may overwrite."""

  @abc.abstractmethod
  def read_examples(self, split):
    """The split's examples, all read before anything is written.

    Raises:
      ValueError: bad input, naming the file and line.
    """

  @abc.abstractmethod
  def convert_examples(self, split, examples, tokenizer, max_seq_length):
    """The split's features: {name: numpy array}, one row per feature.

    They hold what the model and the objective read, and is_real_example
    (1 on every row: the runner's padding rows have 0). One example may give
    several features; the task keeps its own feature-to-example array among
    them (decode gets them back in the split's SplitData).
    """

  @abc.abstractmethod
  def build_model(self, config):
    """The task's keras model for a BertConfig, declaring its checkpoint
    head names (see model_weights.checkpoint_variables)."""

  @property
  def name(self):
    """The task's name, which its runs record with their checkpoints
    (runner: a run resumed for another task is refused, naming both)."""
    return type(self).__name__

  def model_flags(self):
    """{flag: value} of the task's flags that shape its model's checkpoint
    variables beside the config (run_ner's --feature_based), or choose
    what it learns (run_classifier's --task_name): a run resumed with
    others is refused, naming the flag; none by default."""
    return {}

  def labels_fields(self):
    """The head's labels as extra fields of the bert_config.json the run
    writes into --output_dir (checkpoints.names.labels_fields), so that the
    directory, converted, names them; None (the default): a head without
    labels."""
    return None

  @property
  @abc.abstractmethod
  def objective(self):
    """The training objective: loss numerators and denominators, as
    bert_tf.objectives defines them."""

  def decode(self, split, data, outputs, tokenizer):
    """The split's predictions: what the model's outputs (on data.features,
    in feature order) say about data.examples, made once for evaluate and
    write_predictions; SQuAD's answer texts, for which it has the tokenizer
    that made the features. The outputs themselves by default.
    """
    del split, data, tokenizer
    return outputs

  @abc.abstractmethod
  def evaluate(self, split, data, predictions, batch_size):
    """{metric: float} for the split's results file, from decode's
    predictions and the split's SplitData."""

  def can_score(self, split, examples):
    """Whether a predicted split carries the answers to score it against
    (a dev file given as SQuAD's predict_file): predicting it then also
    writes its eval_results_file, with its predictions."""
    del split, examples
    return False

  def feature_records(self, split):
    """(file name, feature names) of a TFRecord file in --output_dir that
    the split's features are written to, as the original writes SQuAD's
    train.tf_record; None (the default): none."""
    del split
    return None

  def eval_results_file(self, split):
    """The name of the split's results file in --output_dir."""
    del split  # every split of most tasks writes the original's one file
    return "eval_results.txt"

  def prediction_files(self, split):
    """The names of the files write_predictions writes in --output_dir for
    a split predicted or evaluated (run_ner's dev_predictions.txt); none by
    default."""
    del split
    return ()

  def output_set(self, split):
    """Every file a split's predictions can write in --output_dir, together:
    those one run does not write (a results file where its examples cannot
    be scored) are an earlier run's, and go when the new set is written."""
    return (*self.prediction_files(split), self.eval_results_file(split))

  def write_predictions(self, split, data, predictions, files):
    """Writes decode's predictions to `files`, opened for writing in the
    order of prediction_files; they replace the old ones together, with the
    split's results file when it is scored, when all are written."""
    del split, data, predictions, files

  def serving(self, model, tokenizer, max_seq_length):
    """(tf.Module, {signature name: tf.function}) to export for TF Serving,
    where `exports` holds: serving_default (ids, core ops only) and, given
    the InGraphTokenizer of the model's vocabulary (None: an ids-only
    export), serve_text.
    """
    raise NotImplementedError(f"{type(self).__name__} has no export")
