"""Every task model takes its preprocessor the same way, as keras-hub's
tasks do: keyword-only, right after the model's required arguments."""

import inspect

import pytest

import bert_tf

TASK_MODELS = {
    bert_tf.BertClassifier: ("config", "num_labels"),
    bert_tf.BertEmbedder: ("config",),
    bert_tf.BertPretrainer: ("config",),
    bert_tf.BertSpanLabeler: ("config",),
    bert_tf.BertTagger: ("config", "num_labels"),
    bert_tf.BertMultipleChoice: ("config",),
}


@pytest.mark.parametrize("model_class", TASK_MODELS,
                         ids=lambda model_class: model_class.__name__)
def test_the_preprocessor_follows_the_required_arguments(model_class):
  parameters = list(
      inspect.signature(model_class.__init__).parameters.values())
  positional = tuple(parameter.name for parameter in parameters[1:]
                     if parameter.kind == parameter.POSITIONAL_OR_KEYWORD)
  assert positional == TASK_MODELS[model_class]
  keyword_only = [parameter.name for parameter in parameters
                  if parameter.kind == parameter.KEYWORD_ONLY]
  assert keyword_only[0] == "preprocessor"
  assert hasattr(model_class, "preprocessor_class")
