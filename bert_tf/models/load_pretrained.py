"""bert_tf.load_pretrained: any model directory as the bert_tf model of its
head (MODEL_CLASSES), with its vocabulary."""

from bert_tf.checkpoints import huggingface, sentence_transformers
from bert_tf.checkpoints.model_directory import open_model_directory
from bert_tf.models import (BertClassifier, BertEmbedder, BertEncoder,
                            BertMultipleChoice, BertNextSentenceClassifier,
                            BertPretrainer, BertRoutedSparseEncoder,
                            BertSparseEncoder, BertSpanLabeler, BertTagger)
from bert_tf.models.from_pretrained import build_and_load

# The bert_tf model of each transformers class (huggingface.ARCHITECTURES),
# as each model names the classes it is (huggingface_architectures).
MODEL_CLASSES = {
    architecture: model_class
    for model_class in (BertEncoder, BertPretrainer, BertNextSentenceClassifier,
                        BertClassifier, BertSpanLabeler, BertTagger,
                        BertMultipleChoice)
    for architecture in model_class.huggingface_architectures}


# The bert_tf model of each sentence-transformers model type that is not
# a Hugging Face head's (a CrossEncoder is a BertClassifier).
_PIPELINE_CLASSES = {sentence_transformers.EMBEDDER: BertEmbedder,
                     sentence_transformers.SPARSE_ENCODER: BertSparseEncoder}


def load_pretrained(model_dir, model_class=None, **model_arguments):
  """Builds a bert_tf model from a model directory and loads its weights.

  Args:
    model_dir: a ModelDirectory opened already (open_model_directory), or
      the path of one: a directory as Google released them (bert_config.json,
      vocab.txt, bert_model.ckpt.*, .meta files or not), a community one
      (model.ckpt-N with optimizer slots, with or without a `checkpoint`
      index file), a training run's, or a Hugging Face folder (config.json,
      model.safetensors, vocab.txt or transformers 5's tokenizer.json), or
      a sentence-transformers folder (either layout): an embedder gives a
      BertEmbedder, a SparseEncoder a BertSparseEncoder (of a Router, a
      BertRoutedSparseEncoder), a CrossEncoder a BertClassifier, each with
      its preprocessor (the folder's max length; a cross-encoder's pairs packed
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
  source = open_model_directory(model_dir)
  pipeline = source.pipeline
  if model_class is None and pipeline is not None:
    model_class = _PIPELINE_CLASSES.get(pipeline.model_type)
    if pipeline.static_query is not None:
      model_class = BertRoutedSparseEncoder
  if model_class is None:
    huggingface.check_mapped(source.architecture_name, source.path)
    model_class = MODEL_CLASSES[source.architecture_name]
  return build_and_load(source, model_class, **model_arguments)


