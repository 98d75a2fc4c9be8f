"""Opening a model directory: a release, a community checkpoint or a Hugging
Face folder, as a bert_tf model with its vocabulary."""

import dataclasses
import logging

from bert_tf.checkpoints import conversion, huggingface, sentence_transformers
from bert_tf.checkpoints.tf_checkpoints import LoadReport, load_checkpoint
from bert_tf.config import BertConfig
from bert_tf.models import (BertClassifier, BertEmbedder, BertEncoder,
                            BertMultipleChoice, BertNextSentenceClassifier,
                            BertPretrainer, BertSpanLabeler, BertTagger)
from bert_tf.wordpiece import vocabulary
from bert_tf.models.text_model import TextModel
from bert_tf.text.packing import ORIGINAL_PAIRS, TRANSFORMERS_PAIRS
from bert_tf.text.preprocessor import BertPreprocessor

logger = logging.getLogger(__name__)

# The bert_tf model of each transformers class (huggingface.ARCHITECTURES),
# as each model names the classes it is (huggingface_architectures).
MODEL_CLASSES = {
    architecture: model_class
    for model_class in (BertEncoder, BertPretrainer, BertNextSentenceClassifier,
                        BertClassifier, BertSpanLabeler, BertTagger,
                        BertMultipleChoice)
    for architecture in model_class.huggingface_architectures}


@dataclasses.dataclass
class PretrainedModel:
  """A model directory, opened: its config, the loaded model and its files.

  Attributes:
    do_lower_case: tokenizer_config.json's where the directory has one, else
      what its vocab.txt shows (vocabulary.vocab_is_lower_cased).
    labels: the head's labels in the order of its logits, where it
      classifies.
    model_max_length: tokenizer_config.json's, or None where unset.
    pipeline: a sentence-transformers folder's
      (sentence_transformers.Pipeline), or None.
  """
  config: BertConfig
  model: object
  vocab_file: str
  load_report: LoadReport
  do_lower_case: bool
  labels: list
  model_max_length: object = None
  pipeline: object = None

  def preprocessor(self, max_seq_length=None):
    """A BertPreprocessor of this model's vocabulary (vocab.txt or
    tokenizer.json) and casing, so that a model built on it takes raw text
    (BertClassifier(preprocessor=...)); see preprocessor_of."""
    return preprocessor_of(self.vocab_file, self.do_lower_case, self.config,
                           self.model_max_length, max_seq_length)


def preprocessor_of(vocabulary, do_lower_case, config, model_max_length,
                    max_seq_length=None, pair_packing=ORIGINAL_PAIRS):
  """A BertPreprocessor of a model directory's vocabulary (a path or a
  rules.Vocabulary) and casing. max_seq_length defaults to 128, or the
  tokenizer's model_max_length or the model's max_position_embeddings where
  that is less; a longer one than max_position_embeddings is refused here,
  not at its first batch."""
  positions = config.max_position_embeddings
  if max_seq_length is not None and max_seq_length > positions:
    raise ValueError(f"max_seq_length={max_seq_length} is over the "
                     f"model's max_position_embeddings, {positions}")
  if max_seq_length is None:
    max_seq_length = min(128, model_max_length or 128, positions)
  return BertPreprocessor(vocabulary, do_lower_case, max_seq_length,
                          pair_packing=pair_packing)


def load_pretrained(model_dir, model_class=None, **model_arguments):
  """Builds a bert_tf model from a model directory and loads its weights.

  Args:
    model_dir: a directory as Google released them (bert_config.json,
      vocab.txt, bert_model.ckpt.*, .meta files or not), a community one
      (model.ckpt-N with optimizer slots, with or without a `checkpoint`
      index file), a training run's, or a Hugging Face folder (config.json,
      model.safetensors, vocab.txt or transformers 5's tokenizer.json), or
      a sentence-transformers folder (either layout): an embedder gives a
      BertEmbedder, a CrossEncoder a BertClassifier, each with its
      preprocessor (the folder's max length; a cross-encoder's pairs packed
      as transformers packs them) and settings.
    model_class: the bert_tf model to build (BertPretrainer, BertEncoder,
      ...); by default the one of the checkpoint's head (MODEL_CLASSES; a
      folder's class that has none is refused, but gives its encoder to
      BertEncoder).
    **model_arguments: the class's own (e.g. num_labels); a classifier's
      num_labels, problem_type and a tagger's labels default to the
      head's, an embedder's and a cross-encoder's to the folder's.

  Returns:
    A PretrainedModel.
  """
  return from_checkpoint(conversion.open_checkpoint(model_dir), model_class,
                         **model_arguments)


def task_model(model_class, model_dir, max_seq_length=None, **arguments):
  """model_class.from_pretrained(model_dir, ...): the model, its weights
  loaded from any model directory, with the directory's preprocessor where
  the model takes text (a sentence-transformers folder's own, unless
  max_seq_length is given). The checkpoint's head is reused where it is
  the model's kind and shape; else the model has a new head. The log says
  which.

  Raises:
    ValueError: a model that needs num_labels, given none, from a
      directory without its kind of head.
  """
  source = conversion.open_checkpoint(model_dir)
  if issubclass(model_class, TextModel) and "preprocessor" not in arguments \
      and (source.pipeline is None or max_seq_length is not None):
    arguments["preprocessor"] = preprocessor_of(
        source.vocabulary, do_lower_case_of(source), source.config,
        source.tokenizer_files.model_max_length, max_seq_length,
        ORIGINAL_PAIRS if source.pipeline is None else TRANSFORMERS_PAIRS)
  if "num_labels" in getattr(model_class, "config_arguments", ()) and \
      "num_labels" not in arguments and \
      not _head_arguments(source, model_class, arguments):
    raise ValueError(f"{model_dir}: no {model_class.__name__} head to take "
                     f"num_labels from; pass num_labels=")
  pretrained = from_checkpoint(source, model_class, new_head=True,
                               **arguments)
  _log_head(pretrained.model, pretrained.load_report, model_dir)
  return pretrained.model


def _log_head(model, report, model_dir):
  """Logs whether the model's head came from model_dir or is new."""
  head = list(model.checkpoint_head_names)
  if not head:
    return
  new = [name for name in head if name in report.not_in_checkpoint]
  if new:
    logger.info("%s: a new head (%s), not in %s", type(model).__name__,
                ", ".join(new), model_dir)
  else:
    logger.info("%s: its head from %s (%d variables)",
                type(model).__name__, model_dir, len(head))


def from_checkpoint(source, model_class=None, new_head=False,
                    **model_arguments):
  """load_pretrained's model from a model directory opened already
  (conversion.open_checkpoint's Checkpoint): a run that opened its
  --init_checkpoint builds its model without opening it again.

  Args:
    new_head: whether a head whose shape differs from the checkpoint's
      (other num_labels) keeps its initialisation instead of being
      refused.
  """
  pipeline = source.pipeline
  if model_class is None and pipeline is not None and \
      pipeline.model_type == sentence_transformers.EMBEDDER:
    model_class = BertEmbedder
  if model_class is None:
    huggingface.check_mapped(source.architecture_name, source.path)
    model_class = MODEL_CLASSES[source.architecture_name]
  do_lower_case = do_lower_case_of(source)
  defaults = _head_arguments(source, model_class, model_arguments)
  if pipeline is not None:
    defaults.update(_pipeline_arguments(source, do_lower_case))
  names = list(getattr(model_class, "config_arguments", ()))
  if issubclass(model_class, TextModel):
    names.append("preprocessor")
  for name in names:
    if name in defaults:
      model_arguments.setdefault(name, defaults[name])
  model = model_class.built_in(model_arguments.pop("dtype", None),
                               source.config, **model_arguments)
  report = load_checkpoint(model, source.path, source.reader,
                           new_head=new_head)
  return PretrainedModel(config=source.config, model=model,
                         vocab_file=source.vocab_file, load_report=report,
                         do_lower_case=do_lower_case, labels=source.labels,
                         model_max_length=(
                             source.tokenizer_files.model_max_length),
                         pipeline=pipeline)


def do_lower_case_of(source):
  """The casing of an opened model directory: as its tokenizer files say,
  else as its vocabulary shows (vocabulary.vocab_is_lower_cased)."""
  if source.do_lower_case is not None:
    return source.do_lower_case
  return vocabulary.vocab_is_lower_cased(source.vocabulary)


def _head_arguments(source, model_class, model_arguments):
  """The head's num_labels, labels and problem_type, where the checkpoint's
  head is of model_class's kind and the arguments ask for no other number
  of labels (a head of other labels is a new one)."""
  labels = source.labels
  if not labels or source.architecture_name not in \
      model_class.huggingface_architectures:
    return {}
  if model_arguments.get("num_labels", len(labels)) != len(labels):
    return {}
  return {"num_labels": len(labels), "labels": labels,
          "problem_type": source.problem_type}


def _pipeline_arguments(source, do_lower_case):
  """The model arguments a sentence-transformers folder sets: a
  preprocessor of its max length, and an embedder's modules and prompts or
  a cross-encoder's score activation."""
  pipeline, config = source.pipeline, source.config
  sentence_transformers.check_lower_case_input(pipeline, do_lower_case)
  max_seq_length = sentence_transformers.max_length_of(
      pipeline, source.tokenizer_files.model_max_length,
      config.max_position_embeddings)
  preprocessor = BertPreprocessor(source.vocabulary, do_lower_case,
                                  max_seq_length,
                                  pair_packing=TRANSFORMERS_PAIRS)
  if pipeline.model_type == sentence_transformers.CROSS_ENCODER:
    if source.architecture_name != "BertForSequenceClassification":
      raise ValueError(f"{source.path}: a CrossEncoder of "
                       f"{source.architecture_name}; bert_tf reproduces "
                       f"those of BertForSequenceClassification")
    default = "sigmoid" if len(source.labels) == 1 else "linear"
    return {"preprocessor": preprocessor,
            "score_activation": pipeline.activation or default}
  return {"preprocessor": preprocessor, "pooling": list(pipeline.pooling),
          "dense": [{"units": module.units, "activation": module.activation,
                     "use_bias": module.use_bias}
                    for module in pipeline.dense],
          "normalize": pipeline.normalize, "prompts": pipeline.prompts,
          "default_prompt_name": pipeline.default_prompt_name,
          "similarity": pipeline.similarity or "cosine"}
