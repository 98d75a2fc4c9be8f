"""Hugging Face BERT folders under the original names: the architectures
and their name tables, and the files a folder is written as
(reader reads one).

A folder as transformers' save_pretrained writes it: config.json,
model.safetensors (or shards listed in model.safetensors.index.json),
vocab.txt (transformers 5: tokenizer.json instead) and tokenizer_config
.json. Its tensors are named after PyTorch
modules ("bert.encoder.layer.0.attention.self.query.weight", dense weights
[out, in]); read here, they answer to the original checkpoint names
("bert/encoder/layer_0/attention/self/query/kernel", [in, out]), so that
everything that loads an original checkpoint loads a folder. Written here,
a folder loads in transformers' BertFor... class with no missing or
unexpected weights. Weights go through the safetensors package's numpy API;
nothing is unpickled and torch is never imported.
"""

import dataclasses
import json
import os
import re

import numpy as np

from bert_tf.checkpoints.huggingface.config import to_huggingface_dict
from bert_tf.checkpoints.names import encoder_names, labels_fields
from bert_tf.files import storage
from bert_tf.wordpiece import tokenizer_json

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
WEIGHTS_INDEX_FILE = "model.safetensors.index.json"
TOKENIZER_CONFIG_FILE = tokenizer_json.TOKENIZER_CONFIG_FILE


@dataclasses.dataclass(frozen=True)
class Architecture:
  """A transformers BERT class: its head's original names -> its names.

  Attributes:
    head_names: {original name: Hugging Face name} of the head's tensors
      (weights [num_classes, hidden_size] in both, no transpose).
    has_pooler: transformers builds its BertModel with a pooler.
    prefix: the encoder's name prefix ("bert.", none for BertModel alone).
  """
  head_names: dict
  has_pooler: bool = True
  prefix: str = "bert."


def _classifier(scope=""):
  return {f"{scope}output_weights": "classifier.weight",
          f"{scope}output_bias": "classifier.bias"}


# run_pretraining's heads.
MASKED_LM_NAMES = {
    "cls/predictions/transform/dense/kernel":
        "cls.predictions.transform.dense.weight",
    "cls/predictions/transform/dense/bias":
        "cls.predictions.transform.dense.bias",
    "cls/predictions/transform/LayerNorm/gamma":
        "cls.predictions.transform.LayerNorm.weight",
    "cls/predictions/transform/LayerNorm/beta":
        "cls.predictions.transform.LayerNorm.bias",
    "cls/predictions/output_bias": "cls.predictions.bias"}
NEXT_SENTENCE_NAMES = {
    "cls/seq_relationship/output_weights": "cls.seq_relationship.weight",
    "cls/seq_relationship/output_bias": "cls.seq_relationship.bias"}

ARCHITECTURES = {
    "BertModel": Architecture({}, prefix=""),
    "BertForPreTraining": Architecture({**MASKED_LM_NAMES,
                                        **NEXT_SENTENCE_NAMES}),
    "BertForNextSentencePrediction": Architecture(NEXT_SENTENCE_NAMES),
    # bert-base-uncased and many others on the Hub name this class (often
    # with the next-sentence head and the pooler stored as well).
    "BertForMaskedLM": Architecture(MASKED_LM_NAMES, has_pooler=False),
    # run_classifier's head, and run_swag's (one logit per ending).
    "BertForSequenceClassification": Architecture(_classifier()),
    "BertForMultipleChoice": Architecture(_classifier()),
    # run_squad's and run_ner's heads; transformers builds these without a
    # pooler.
    "BertForQuestionAnswering": Architecture(
        {"cls/squad/output_weights": "qa_outputs.weight",
         "cls/squad/output_bias": "qa_outputs.bias"}, has_pooler=False),
    "BertForTokenClassification": Architecture(
        _classifier("cls/ner/"), has_pooler=False),
}

# The heads whose rows are labels (id2label): the rest have none, or one
# output per ending or per span edge.
LABELLED_ARCHITECTURES = ("BertForSequenceClassification",
                          "BertForTokenClassification",
                          "BertForNextSentencePrediction")
# A class bert_tf does not map: its encoder is read, its head is not.
UNMAPPED = Architecture({})

POOLER_SCOPE = "bert/pooler/"


def is_folder(path):
  """Whether `path` is a Hugging Face model folder (it has config.json)."""
  return storage.isdir(path) and storage.exists(os.path.join(path,
                                                             CONFIG_FILE))


def huggingface_name(original, prefix="bert."):
  """bert/encoder/layer_3/output/dense/kernel ->
  bert.encoder.layer.3.output.dense.weight (prefix replaces "bert.")."""
  name = re.sub(r"layer_(\d+)", r"layer.\1", original).replace("/", ".")
  stem, _, last = name.rpartition(".")
  if last.endswith("embeddings"):
    stem, last = name, "weight"
  last = {"kernel": "weight", "gamma": "weight", "beta": "bias"}.get(last,
                                                                    last)
  return re.sub(r"^bert\.", prefix, f"{stem}.{last}")


def canonical_name(name):
  """A stored name as transformers names it now: older exports say
  LayerNorm.gamma/beta, and a BertModel's lack the "bert." prefix."""
  name = re.sub(r"LayerNorm\.gamma$", "LayerNorm.weight", name)
  name = re.sub(r"LayerNorm\.beta$", "LayerNorm.bias", name)
  if name.startswith(("embeddings.", "encoder.", "pooler.")):
    name = "bert." + name
  return name


def original_names(config, architecture):
  """The original names of an architecture's tensors, in checkpoint order."""
  names = [name for name in encoder_names(config)
           if architecture.has_pooler or not name.startswith(POOLER_SCOPE)]
  return names + list(architecture.head_names)


def architecture_of(shapes, where, one_output="BertForMultipleChoice"):
  """The transformers class of the head in {original name: shape}.

  Args:
    shapes: a checkpoint's variables.
    where: the checkpoint, for the message.
    one_output: the class of an output_weights with one row: run_swag's
      (BertForMultipleChoice), or BertForSequenceClassification for a
      regression such as STS-B.

  Raises:
    ValueError: it holds the heads of two classes.
  """
  found = set()
  if "cls/predictions/output_bias" in shapes:
    found.add("BertForPreTraining" if "cls/seq_relationship/output_weights"
              in shapes else "BertForMaskedLM")
  elif "cls/seq_relationship/output_weights" in shapes:
    found.add("BertForNextSentencePrediction")
  for scope, name in (("cls/squad/", "BertForQuestionAnswering"),
                      ("cls/ner/", "BertForTokenClassification")):
    if any(variable.startswith(scope) for variable in shapes):
      found.add(name)
  if "output_weights" in shapes:
    found.add(one_output if shapes["output_weights"][0] == 1
              else "BertForSequenceClassification")
  if len(found) > 1:
    raise ValueError(f"{where}: holds the heads of {', '.join(sorted(found))}"
                     f"; name the one to convert (--architecture)")
  return found.pop() if found else "BertModel"


def is_transposed(original):
  return original.endswith("/kernel")


def num_labels_of(architecture_name, labels):
  """How many rows the head's output_weights has."""
  return 1 if architecture_name == "BertForMultipleChoice" else len(labels)


def check_mapped(architecture_name, where):
  """Raises ValueError unless bert_tf maps the class (ARCHITECTURES): its
  head cannot be built or converted, though its encoder loads."""
  if architecture_name not in ARCHITECTURES:
    raise ValueError(
        f"{where}: architecture {architecture_name!r} is not one bert_tf "
        f"maps (it maps {', '.join(ARCHITECTURES)}); its encoder alone "
        f"loads: load_pretrained(folder, bert_tf.BertEncoder), or convert "
        f"it with --architecture=BertModel")


def default_labels(architecture_name, count):
  """The labels of a head that names none: transformers' LABEL_i, one for
  multiple choice."""
  if architecture_name == "BertForMultipleChoice":
    count = 1
  return [f"LABEL_{index}" for index in range(count)]


def folder_files(folder):
  """The files of a folder a run reads (none may be overwritten)."""
  return [os.path.join(folder, name) for name in sorted(os.listdir(folder))
          if name.endswith((".json", ".safetensors", ".txt"))]


def huggingface_config(config, architecture_name, labels,
                       problem_type=None, extra_fields=None):
  """config.json's object for `config` as `architecture_name`, with
  extra_fields (a CrossEncoder's activation) added."""
  values = {"architectures": [architecture_name]}
  values.update(to_huggingface_dict(config))
  values["pad_token_id"] = 0
  if architecture_name in LABELLED_ARCHITECTURES:
    values.update(labels_fields(labels, problem_type))
  values.update(extra_fields or {})
  return values


def write_folder_files(directory, config, architecture_name, tensors,
                       do_lower_case, labels, problem_type=None,
                       model_max_length=None, extra_fields=None):
  """Writes config.json, model.safetensors and tokenizer_config.json into
  `directory` (a new one the caller renames into place).

  Args:
    tensors: {original name: numpy array} of the architecture's tensors
      (see original_names), in the original layout.
    extra_fields: further config.json fields (huggingface_config).
  """
  from safetensors.numpy import save_file  # pylint: disable=g-import-not-at-top
  prefix = ARCHITECTURES[architecture_name].prefix
  head_names = ARCHITECTURES[architecture_name].head_names
  weights = {}
  for original in list(tensors):
    value = tensors.pop(original)  # each array released as it is moved
    if is_transposed(original):
      value = np.ascontiguousarray(value.T)
    name = head_names.get(original) or huggingface_name(original, prefix)
    weights[name] = value
  save_file(weights, os.path.join(directory, WEIGHTS_FILE),
            metadata={"format": "pt"})
  write_json(os.path.join(directory, CONFIG_FILE),
             huggingface_config(config, architecture_name, labels,
                                problem_type, extra_fields))
  write_tokenizer_config(directory, do_lower_case,
                         model_max_length or config.max_position_embeddings)


def write_tokenizer_config(directory, do_lower_case, model_max_length):
  """tokenizer_config.json of a BERT tokenizer, into `directory`."""
  write_json(os.path.join(directory, TOKENIZER_CONFIG_FILE),
             {"do_lower_case": bool(do_lower_case),
              "tokenizer_class": "BertTokenizer",
              "model_max_length": model_max_length})


def write_json(path, values):
  """A JSON file as transformers writes its configs (indented, sorted)."""
  with storage.open_file(path, "w") as writer:
    writer.write(json.dumps(values, indent=2, sort_keys=True) + "\n")
