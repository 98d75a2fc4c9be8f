"""CoNLL-2003 named-entity recognition as the paper's §5.3: run_ner's task.

Sentences come from the CoNLL-2003 files (examples.py: eng.train, eng.testa
and eng.testb as train, dev and test), become first-piece tagging features
with sentence windows and, optionally, document context (features.py); the
model is the fine-tuned BertTagger or the feature-based BertFeatureTagger on
a frozen encoder. Each split predicted or evaluated is scored at the entity
level as conlleval scores it (metrics.py) and written in conlleval's input
format, in the input's tag scheme.
"""

import dataclasses
import os

import numpy as np

from bert_tf.checkpoints.names import labels_fields
from bert_tf.layers import layer_combination
from bert_tf.models.feature_tagger import BertFeatureTagger
from bert_tf.models.tagger import BertTagger
from bert_tf.objectives.tagging import TaggingObjective
from bert_tf.tasks.ner import examples, features
from bert_tf.tasks.ner.metrics import entity_metrics
from bert_tf.tasks.ner.serving import ner_serving
from bert_tf.tasks.task import FineTuningTask
from bert_tf.text.ner.features import word_values

# The CoNLL-2003 distribution's names of the splits.
SPLIT_FILES = {"train": "eng.train", "dev": "eng.testa", "test": "eng.testb"}
# The smallest probability eval_loss takes the log of.
_TINY = 1e-12


@dataclasses.dataclass
class TaggedSentences:
  """decode's result: each sentence's predicted tags, in the split's own
  scheme, and the mean cross-entropy of the gold tags."""
  tags: list
  loss: float


class NerTask(FineTuningTask):
  """CoNLL-2003 NER from data_dir.

  Args:
    data_dir: the directory of eng.train, eng.testa and eng.testb.
    document_context: fill each sequence with the sentence's neighbours
      from its document.
    feature_based: None to fine-tune; a layer_combination.FEATURE_CHOICES
      name to train a BiLSTM on those layers of the frozen encoder.
    lstm_units: the feature-based BiLSTM's size per direction.
  """

  name = "ner"
  eval_splits = ("dev",)
  predict_splits = ("test",)
  objective = TaggingObjective()
  exports = True

  def __init__(self, data_dir, document_context=False, feature_based=None,
               lstm_units=768):
    if feature_based is not None:
      layer_combination.check_feature_choice(feature_based)
    if lstm_units < 1:
      raise ValueError(f"--lstm_units={lstm_units}: must be at least 1")
    self.data_dir = data_dir
    self.document_context = document_context
    self.feature_based = feature_based
    self.lstm_units = lstm_units

  def input_files(self, split):
    return [("--data_dir", os.path.join(self.data_dir, SPLIT_FILES[split]))]

  def read_examples(self, split):
    path = self.input_files(split)[0][1]
    sentences = examples.read_conll(path)
    if not sentences:
      raise ValueError(f"{path}: no sentences")
    return sentences

  def convert_examples(self, split, sentences, tokenizer, max_seq_length):
    return features.convert_sentences(
        sentences, tokenizer, max_seq_length, self.document_context)

  def build_model(self, config):
    if self.feature_based is None:
      # Labelled: an init checkpoint's tagger loads its rows by name.
      return BertTagger(config, len(examples.LABELS), labels=examples.LABELS)
    selected_layers, combination = layer_combination.feature_layers(
        self.feature_based, config.num_hidden_layers)
    return BertFeatureTagger(config, len(examples.LABELS), selected_layers,
                             combination, self.lstm_units)

  def model_flags(self):
    if self.feature_based is None:
      return {"feature_based": None}
    return {"feature_based": self.feature_based,
            "lstm_units": self.lstm_units}

  def labels_fields(self):
    return labels_fields(list(examples.LABELS))

  def decode(self, split, data, outputs, tokenizer):
    """Each word's arg-max tag (from its first piece) in the file's
    scheme, and eval_loss over the words."""
    probabilities, gold = word_values(
        data.features, outputs["probabilities"], data.features["label_ids"])
    loss = float(np.mean(-np.log(np.maximum(
        probabilities[np.arange(len(gold)), gold], _TINY))))
    predicted = iter(np.argmax(probabilities, axis=-1).tolist())
    scheme = examples.detect_scheme(data.examples)
    tags = [examples.from_iob2([examples.LABELS[next(predicted)]
                                for _ in sentence.words], scheme)
            for sentence in data.examples]
    return TaggedSentences(tags, loss)

  def can_score(self, split, examples):
    return True  # every CoNLL line has its gold tag

  def evaluate(self, split, data, predictions, batch_size):
    return {"eval_loss": predictions.loss, **entity_metrics(
        [sentence.tags for sentence in data.examples], predictions.tags)}

  def eval_results_file(self, split):
    return "eval_results.txt" if split == "dev" else f"{split}_results.txt"

  def prediction_files(self, split):
    return (f"{split}_predictions.txt",)

  def write_predictions(self, split, data, predictions, files):
    """conlleval's input: `word gold predicted` per word, a blank line
    after each sentence."""
    (writer,) = files
    for sentence, predicted in zip(data.examples, predictions.tags):
      writer.write("".join(f"{word} {gold} {tag}\n" for word, gold, tag in
                           zip(sentence.words, sentence.tags, predicted)))
      writer.write("\n")

  def serving(self, model, tokenizer, max_seq_length):
    return ner_serving(model, tokenizer, max_seq_length)
