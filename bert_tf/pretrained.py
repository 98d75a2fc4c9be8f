"""Opening a model directory: a release, a community checkpoint or a Hugging
Face folder, as a bert_tf model with its vocabulary."""

import dataclasses

from bert_tf import vocabulary
from bert_tf.checkpoints import conversion
from bert_tf.checkpoints.tf_checkpoints import LoadReport, load_checkpoint
from bert_tf.config import BertConfig
from bert_tf.models import (BertClassifier, BertEncoder, BertMultipleChoice,
                            BertPretrainer, BertSpanLabeler, BertTagger)
from bert_tf.text.preprocessor import BertPreprocessor

# The bert_tf model of each transformers class (huggingface.ARCHITECTURES).
MODEL_CLASSES = {
    "BertModel": BertEncoder,
    "BertForPreTraining": BertPretrainer,
    "BertForMaskedLM": BertPretrainer,
    "BertForSequenceClassification": BertClassifier,
    "BertForQuestionAnswering": BertSpanLabeler,
    "BertForTokenClassification": BertTagger,
    "BertForMultipleChoice": BertMultipleChoice,
}


@dataclasses.dataclass
class PretrainedModel:
  """A model directory, opened: its config, the loaded model and its files.

  Attributes:
    do_lower_case: tokenizer_config.json's where the directory has one, else
      what its vocab.txt shows (vocabulary.vocab_is_lower_cased).
    labels: the head's labels in order, where it classifies.
  """
  config: BertConfig
  model: object
  vocab_file: str
  load_report: LoadReport
  do_lower_case: bool
  labels: list

  def preprocessor(self, max_seq_length=128):
    """A BertPreprocessor of this model's vocabulary and casing, so that a
    model built on it takes raw text (BertClassifier(preprocessor=...))."""
    return BertPreprocessor(self.vocab_file, self.do_lower_case,
                            max_seq_length)


def load_pretrained(model_dir, model_class=None, **model_arguments):
  """Builds a bert_tf model from a model directory and loads its weights.

  Args:
    model_dir: a directory as Google released them (bert_config.json,
      vocab.txt, bert_model.ckpt.*, .meta files or not), a community one
      (model.ckpt-N with optimizer slots, with or without a `checkpoint`
      index file), a training run's, or a Hugging Face folder (config.json,
      model.safetensors, vocab.txt).
    model_class: the bert_tf model to build (BertPretrainer, BertEncoder,
      ...); by default the one of the checkpoint's head (MODEL_CLASSES).
    **model_arguments: the class's own (e.g. num_labels); a classifier's
      num_labels defaults to the head's.

  Returns:
    A PretrainedModel.
  """
  source = conversion.open_checkpoint(model_dir)
  model_class = model_class or MODEL_CLASSES[source.architecture_name]
  if "num_labels" in getattr(model_class, "config_arguments", ()):
    model_arguments.setdefault("num_labels", len(source.labels))
  model = model_class(source.config, **model_arguments)
  report = load_checkpoint(model, source.path, source.reader)
  do_lower_case = source.do_lower_case
  if do_lower_case is None:
    do_lower_case = vocabulary.vocab_is_lower_cased(source.vocab_file)
  return PretrainedModel(config=source.config, model=model,
                         vocab_file=source.vocab_file, load_report=report,
                         do_lower_case=do_lower_case, labels=source.labels)
