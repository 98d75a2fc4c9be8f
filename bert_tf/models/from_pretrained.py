"""Building a bert_tf model for an opened model directory and loading its
weights: the directory's vocabulary, casing, head labels and settings as
the model's arguments. Imports no model class, so that every model's
from_pretrained can use it."""

import dataclasses
import logging

from bert_tf.checkpoints import sentence_transformers
from bert_tf.checkpoints.model_directory import (DEFAULT_MAX_SEQ_LENGTH,
                                                 default_max_seq_length,
                                                 open_model_directory)
from bert_tf.checkpoints.model_weights import LoadReport, load_weights
from bert_tf.checkpoints.sentence_transformers.activations import (
    activation_or_default)
from bert_tf.config import BertConfig
from bert_tf.text.preprocessor import BertPreprocessor, check_max_seq_length
from bert_tf.wordpiece import rules, vocabulary

logger = logging.getLogger(__name__)


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
    tokenization_rules: the directory's (ModelDirectory's).
  """
  config: BertConfig
  model: object
  vocab_file: str
  load_report: LoadReport
  do_lower_case: bool
  labels: list
  model_max_length: object = None
  pipeline: object = None
  tokenization_rules: str = rules.ORIGINAL_RULES

  def preprocessor(self, max_seq_length=None):
    """A BertPreprocessor of this model's vocabulary (vocab.txt or
    tokenizer.json), casing and tokenization rules, so that a model built
    on it takes raw text (BertClassifier(preprocessor=...)); see
    preprocessor_of."""
    return preprocessor_of(self.vocab_file, self.do_lower_case, self.config,
                           self.model_max_length, max_seq_length,
                           self.tokenization_rules)


def preprocessor_of(vocabulary, do_lower_case, config, model_max_length,
                    max_seq_length=None,
                    tokenization_rules=rules.ORIGINAL_RULES,
                    preprocessor_class=BertPreprocessor):
  """A BertPreprocessor of a model directory's vocabulary (a path or a
  rules.Vocabulary), casing and tokenization rules (its
  ModelDirectory's). max_seq_length defaults to 128 (or the
  preprocessor_class's default_max_seq_length, where it has one: a span
  labeler's 384, as run_squad's), or the tokenizer's model_max_length or
  the model's max_position_embeddings where that is
  less (default_max_seq_length); one that is not an integer, or
  longer than max_position_embeddings, is refused here, not at its first
  batch."""
  positions = config.max_position_embeddings
  if max_seq_length is None:
    max_seq_length = default_max_seq_length(
        model_max_length, positions,
        getattr(preprocessor_class, "default_max_seq_length",
                DEFAULT_MAX_SEQ_LENGTH))
  check_max_seq_length(max_seq_length)
  if max_seq_length > positions:
    raise ValueError(f"max_seq_length={max_seq_length} is over the "
                     f"model's max_position_embeddings, {positions}")
  return preprocessor_class(vocabulary, do_lower_case, max_seq_length,
                            tokenization_rules=tokenization_rules)


def task_model(model_class, model_dir, max_seq_length=None, **arguments):
  """model_class.from_pretrained(model_dir, ...): the model, its weights
  loaded from any model directory, with the directory's preprocessor where
  the model takes text (a sentence-transformers folder's own, unless
  max_seq_length is given; each by the directory's tokenization rules),
  compiled with the task's defaults (compile()).
  The checkpoint's head is reused where it is the model's kind and shape;
  else the model has a new head. A warning names every weight that starts
  at random (model_weights.load_weights).

  Raises:
    ValueError: a model that needs num_labels, given none, from a
      directory without its kind of head.
  """
  if max_seq_length is not None:
    check_max_seq_length(max_seq_length)
  source = open_model_directory(model_dir)
  if hasattr(model_class, "preprocessor_class") and \
      "preprocessor" not in arguments \
      and (source.pipeline is None or max_seq_length is not None):
    arguments["preprocessor"] = preprocessor_of(
        source.vocabulary, source.casing(), source.config,
        source.model_max_length, max_seq_length,
        source.tokenization_rules, model_class.preprocessor_class)
  if "num_labels" in getattr(model_class, "config_arguments", ()) and \
      "num_labels" not in arguments and \
      not _head_arguments(source, model_class, arguments):
    raise ValueError(f"{source.directory}: no {model_class.__name__} head to "
                     f"take "
                     f"num_labels from; pass num_labels=")
  pretrained = build_and_load(source, model_class, new_head=True,
                              **arguments)
  _log_head(pretrained.model, pretrained.load_report, source.directory)
  pretrained.model.compile()  # the task's defaults, as keras-hub's tasks
  return pretrained.model


def _log_head(model, report, model_dir):
  """Logs that the model's head came from model_dir, where it did
  (load_checkpoint warns of the weights that start at random)."""
  if model.checkpoint_head_names and not report.not_in_checkpoint:
    logger.info("%s: its head from %s (%d variables)", type(model).__name__,
                model_dir, len(model.checkpoint_head_names))


def build_and_load(source, model_class, new_head=False, **model_arguments):
  """model_class built for an opened model directory (model_directory's
  Checkpoint), its arguments defaulting to the directory's (head labels, a
  sentence-transformers folder's settings), and its weights loaded: a
  PretrainedModel.

  Args:
    new_head: whether a head whose shape differs from the checkpoint's
      (other num_labels) keeps its initialisation instead of being
      refused.
  """
  pipeline = source.pipeline
  do_lower_case = source.casing()
  defaults = _head_arguments(source, model_class, model_arguments)
  if pipeline is not None:
    defaults.update(_pipeline_arguments(
        source, do_lower_case,
        None if "preprocessor" in model_arguments else
        getattr(model_class, "preprocessor_class", None)))
  names = list(getattr(model_class, "config_arguments", ()))
  if hasattr(model_class, "preprocessor_class"):  # it takes text
    names.append("preprocessor")
  for name in names:
    if name in defaults:
      model_arguments.setdefault(name, defaults[name])
  model = model_class.built_in(model_arguments.pop("dtype", None),
                               source.config, **model_arguments)
  report = load_weights(model, source.reader, source.path,
                        new_head=new_head, named_labels=source.named_labels)
  return PretrainedModel(config=source.config, model=model,
                         vocab_file=source.vocab_file, load_report=report,
                         do_lower_case=do_lower_case, labels=source.labels,
                         model_max_length=source.model_max_length,
                         pipeline=pipeline,
                         tokenization_rules=source.tokenization_rules)


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


def _pipeline_arguments(source, do_lower_case, preprocessor_class):
  """The model arguments a sentence-transformers folder sets: a
  preprocessor of its max length (of preprocessor_class, the model's; None:
  none, the model takes ids or has one given), and an embedder's modules
  and prompts or a cross-encoder's score activation."""
  pipeline, config = source.pipeline, source.config
  sentence_transformers.check_lower_case_input(pipeline, do_lower_case)
  arguments = {}
  if preprocessor_class is not None:
    arguments["preprocessor"] = preprocessor_class(
        source.vocabulary, do_lower_case, source.max_seq_length(),
        tokenization_rules=source.tokenization_rules)
  if pipeline.model_type == sentence_transformers.SPARSE_ENCODER:
    return {**arguments, **_sparse_arguments(source)}
  if pipeline.model_type == sentence_transformers.CROSS_ENCODER:
    if source.architecture_name != "BertForSequenceClassification":
      raise ValueError(f"{source.path}: a CrossEncoder of "
                       f"{source.architecture_name}; bert_tf reproduces "
                       f"those of BertForSequenceClassification")
    return {**arguments,
            "score_activation": activation_or_default(
                pipeline.activation, len(source.labels))}
  return {**arguments, "pooling": list(pipeline.pooling),
          "dense": [{"units": module.units, "activation": module.activation,
                     "use_bias": module.use_bias}
                    for module in pipeline.dense],
          "normalize": pipeline.normalize, "prompts": pipeline.prompts,
          "default_prompt_name": pipeline.default_prompt_name,
          "similarity": pipeline.similarity or "cosine",
          "truncate_dim": pipeline.truncated_dimension(config.hidden_size),
          "include_prompt": pipeline.include_prompt}


# The classes whose masked-LM head a SparseEncoder's Transformer can be.
_MASKED_LM_ARCHITECTURES = ("BertForMaskedLM", "BertForPreTraining")


def _sparse_arguments(source):
  """A SparseEncoder's SpladePooling, max_active_dims and prompts (and a
  Router's query route settings); its Transformer must hold a masked-LM
  head."""
  pipeline = source.pipeline
  if source.architecture_name not in _MASKED_LM_ARCHITECTURES:
    raise ValueError(f"{source.path}: a SparseEncoder of "
                     f"{source.architecture_name}; bert_tf reproduces those "
                     f"of a masked-LM head "
                     f"({', '.join(_MASKED_LM_ARCHITECTURES)})")
  arguments = {"pooling_strategy": pipeline.splade.pooling_strategy,
               "activation": pipeline.splade.activation,
               "max_active_dims": pipeline.max_active_dims,
               "prompts": pipeline.prompts,
               "default_prompt_name": pipeline.default_prompt_name,
               "similarity": pipeline.similarity or "dot"}
  if pipeline.static_query is not None:  # a Router's
    arguments.update(query_max_length=pipeline.query_max_length,
                     default_route=pipeline.default_route)
  return arguments
