"""Hugging Face BERT folders, read and written under the original names.

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

import ml_dtypes
import numpy as np

from bert_tf.checkpoints import sentence_transformers
from bert_tf.checkpoints.huggingface_config import (from_huggingface_dict,
                                                    to_huggingface_dict)
from bert_tf.checkpoints.names import (check_layer_count, encoder_names,
                                      expected_shape, labels_fields,
                                      labels_of_fields)
from bert_tf.checkpoints.safetensors_files import read_tensor, tensor_headers
from bert_tf.wordpiece import tokenizer_json
from bert_tf.files.json_files import read_json_object
from bert_tf.files import storage
from bert_tf.files.model_files import model_file, required_model_file

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
WEIGHTS_INDEX_FILE = "model.safetensors.index.json"
TOKENIZER_CONFIG_FILE = tokenizer_json.TOKENIZER_CONFIG_FILE
# Weights saved by torch.save: pickles, which can run code when loaded.
_PICKLE_FILES = ("pytorch_model.bin", "pytorch_model.bin.index.json")


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
_MASKED_LM_NAMES = {
    "cls/predictions/transform/dense/kernel":
        "cls.predictions.transform.dense.weight",
    "cls/predictions/transform/dense/bias":
        "cls.predictions.transform.dense.bias",
    "cls/predictions/transform/LayerNorm/gamma":
        "cls.predictions.transform.LayerNorm.weight",
    "cls/predictions/transform/LayerNorm/beta":
        "cls.predictions.transform.LayerNorm.bias",
    "cls/predictions/output_bias": "cls.predictions.bias"}
_NEXT_SENTENCE_NAMES = {
    "cls/seq_relationship/output_weights": "cls.seq_relationship.weight",
    "cls/seq_relationship/output_bias": "cls.seq_relationship.bias"}

ARCHITECTURES = {
    "BertModel": Architecture({}, prefix=""),
    "BertForPreTraining": Architecture({**_MASKED_LM_NAMES,
                                        **_NEXT_SENTENCE_NAMES}),
    "BertForNextSentencePrediction": Architecture(_NEXT_SENTENCE_NAMES),
    # bert-base-uncased and many others on the Hub name this class (often
    # with the next-sentence head and the pooler stored as well).
    "BertForMaskedLM": Architecture(_MASKED_LM_NAMES, has_pooler=False),
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
_UNMAPPED = Architecture({})

_POOLER_SCOPE = "bert/pooler/"
# A stored encoder layer's tensors (canonical names), by layer number.
_STORED_LAYER = re.compile(r"bert\.encoder\.layer\.(\d+)\.")
# safetensors' names of the dtypes weights may be stored in, as numpy's.
_FLOAT_DTYPES = {"F16": np.float16, "BF16": ml_dtypes.bfloat16,
                 "F32": np.float32, "F64": np.float64}

# Tensors transformers saves that carry nothing of their own: position ids,
# and the decoder, tied to the word embeddings and the output bias.
_POSITION_IDS = "bert.embeddings.position_ids"
_DECODER_WEIGHT = "cls.predictions.decoder.weight"
_DECODER_BIAS = "cls.predictions.decoder.bias"


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


def _canonical_name(name):
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
           if architecture.has_pooler or not name.startswith(_POOLER_SCOPE)]
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


def _is_transposed(original):
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


class HuggingFaceFolder:
  """A Hugging Face BERT folder, opened and checked, read by original names.

  It answers tf.train.CheckpointReader's two questions
  (get_variable_to_shape_map, get_tensor), so checkpoints.load_checkpoint
  reads it as it reads an original checkpoint.

  Attributes:
    folder: the folder.
    config: its BertConfig (config.json mapped, see BertConfig).
    architecture_name: the transformers class, from config.json's
      "architectures" (or, where it has none, from the tensor names).
    labels: the class labels in the head's row order (id2label, else
      transformers' LABEL_i for num_labels).
    problem_type: config.json's (PROBLEM_TYPES), or None.
    cross_encoder_activation: the activation config.json records for
      sentence-transformers' CrossEncoder, or None where it names none.

  Args:
    folder: the folder.
    stored_dtypes: get_tensor gives each floating-point tensor in the dtype
      it is stored in (a conversion keeps float16 and bfloat16), not
      float32 (what a bert_tf model's variables load).

  Raises (on opening):
    FileNotFoundError: no config.json or no safetensors weights.
    ValueError: one line naming the file and the tensor or field: a
      pickle-only folder, another model_type, a missing tensor, a shape
      that disagrees with config.json, a bad id2label or problem_type.
  """

  def __init__(self, folder, stored_dtypes=False):
    self.folder = folder
    self._stored_dtypes = stored_dtypes
    config_file = required_model_file(
        folder, CONFIG_FILE, "a Hugging Face model folder has one")
    values = read_json_object(config_file)
    self.config = from_huggingface_dict(values, config_file)
    self._files, self._weights_file = self._weight_files()
    self._headers = self._read_headers()
    self._stored = self._stored_names()
    self._check_layer_count(config_file)
    self.architecture_name = self._architecture(values, config_file)
    architecture = ARCHITECTURES.get(self.architecture_name, _UNMAPPED)
    self.labels, self.problem_type = _labels(values, self.architecture_name,
                                             config_file)
    self.cross_encoder_activation = \
        sentence_transformers.cross_encoder_activation(values, config_file)
    # The class's tensors (its pooler may be left out), and the pretraining
    # heads and pooler wherever they are stored too. (A dict of names: in
    # order, and each looked up at once.)
    required = {name: None for name in original_names(self.config,
                                                      architecture)
                if not name.startswith(_POOLER_SCOPE)}
    optional = [name for name in [
        *encoder_names(self.config), *_MASKED_LM_NAMES,
        *_NEXT_SENTENCE_NAMES] if name not in required]
    head_names = {**_MASKED_LM_NAMES, **_NEXT_SENTENCE_NAMES,
                  **architecture.head_names}
    self._names = {}
    for original in [*required, *optional]:
      name = head_names.get(original) or huggingface_name(original)
      if original == "cls/predictions/output_bias" and \
          name not in self._stored and _DECODER_BIAS in self._stored:
        name = _DECODER_BIAS
      if original in required or name in self._stored:
        self._names[original] = name
    self._check_tensors()
    used = {*self._names.values(), _DECODER_WEIGHT, _DECODER_BIAS}
    self._unused = [name for name in self._stored if name not in used]

  def _weight_files(self):
    """({stored name: file}, the index of shards or the one file)."""
    index_file = model_file(self.folder, WEIGHTS_INDEX_FILE)
    if index_file is not None:
      return _shard_files(self.folder, index_file), index_file
    weights_file = model_file(self.folder, WEIGHTS_FILE)
    if weights_file is not None:
      return {name: weights_file
              for name in tensor_headers(weights_file)}, weights_file
    pickles = [name for name in _PICKLE_FILES
               if storage.exists(os.path.join(self.folder, name))]
    if pickles:
      raise ValueError(
          f"{os.path.join(self.folder, pickles[0])}: PyTorch pickle weights, "
          f"which bert_tf does not unpickle (loading a pickle can run any "
          f"code); get {WEIGHTS_FILE}: the model's safetensors revision on "
          f"the Hub, or save it once with transformers "
          f"(model.save_pretrained(dir, safe_serialization=True))")
    raise FileNotFoundError(f"{self.folder}: no {WEIGHTS_FILE} (nor "
                            f"{WEIGHTS_INDEX_FILE}) beside {CONFIG_FILE}")

  def _read_headers(self):
    """{stored name: (dtype, shape)}, each file's header read once; a shard
    that lacks a tensor its index places there is named."""
    names_by_file = {}
    for name, path in self._files.items():
      names_by_file.setdefault(path, []).append(name)
    headers = {}
    for path, names in names_by_file.items():
      held = tensor_headers(path)
      for name in names:
        if name not in held:
          raise ValueError(f"{path}: no tensor {name}, which "
                           f"{WEIGHTS_INDEX_FILE} places in it")
        headers[name] = held[name]
    return headers

  def _stored_names(self):
    """{canonical name: name as stored}, position ids left out."""
    stored = {}
    for name in self._files:
      if _canonical_name(name) != _POSITION_IDS:
        stored.setdefault(_canonical_name(name), name)
    return stored

  def _check_layer_count(self, config_file):
    """Refuses a config.json whose layer count is not the weights', before
    anything is built for it."""
    layers = sorted({int(match.group(1)) for match in map(
        _STORED_LAYER.match, self._stored) if match})
    check_layer_count(layers, self.config, self._weights_file, config_file)

  def _architecture(self, values, config_file):
    """config.json's architecture (one bert_tf does not map too: see
    check_mapped), else the one its tensor names show."""
    named = values.get("architectures") or []
    if not isinstance(named, list) or not all(
        isinstance(name, str) for name in named):
      raise ValueError(
          f"{config_file}: \"architectures\" is {named!r}; expected a list "
          f"of class names, e.g. [\"BertForSequenceClassification\"]")
    if named:
      return named[0]
    if any(name.startswith("cls.predictions.") for name in self._stored):
      return "BertForPreTraining" if "cls.seq_relationship.weight" in \
          self._stored else "BertForMaskedLM"
    if "cls.seq_relationship.weight" in self._stored:
      return "BertForNextSentencePrediction"
    if "qa_outputs.weight" in self._stored:
      return "BertForQuestionAnswering"
    if "classifier.weight" in self._stored:
      raise ValueError(
          f"{config_file}: no \"architectures\" to say which model its "
          f"classifier.weight belongs to; add e.g. \"architectures\": "
          f"[\"BertForSequenceClassification\"]")
    return "BertModel"

  def _check_tensors(self):
    num_labels = num_labels_of(self.architecture_name, self.labels)
    for original, name in self._names.items():
      if name not in self._stored:
        raise ValueError(f"{self._file_of(name)}: no tensor {name}, which "
                         f"{self.architecture_name} has")
      dtype, shape = self._headers[self._stored[name]]
      if dtype not in _FLOAT_DTYPES:
        raise ValueError(f"{self._file_of(name)}: tensor {name} is {dtype}, "
                         f"not floating point; BERT's weights are floats")
      if _is_transposed(original):
        shape = shape[::-1]
      expected = expected_shape(self.config, original, num_labels)
      if shape != expected:
        raise ValueError(
            f"{self._file_of(name)}: tensor {name} is shaped "
            f"{self._stored_shape(name)}, but {CONFIG_FILE} makes it "
            f"{expected[::-1] if _is_transposed(original) else expected}")
    if _DECODER_WEIGHT in self._stored:
      decoder = self._read(_DECODER_WEIGHT)
      if not np.array_equal(decoder, self._read(
          self._names["bert/embeddings/word_embeddings"])):
        raise ValueError(
            f"{self._file_of(_DECODER_WEIGHT)}: {_DECODER_WEIGHT} differs "
            f"from the word embeddings; BERT ties them, as bert_tf does")

  def _file_of(self, name):
    return self._files.get(self._stored.get(name), os.path.join(
        self.folder, WEIGHTS_FILE))

  def _stored_shape(self, name):
    return self._headers[self._stored[name]][1]

  def _dtype(self, name):
    """The dtype get_tensor gives a stored tensor (canonical name)."""
    stored = self._headers[self._stored[name]][0]
    if self._stored_dtypes and stored in _FLOAT_DTYPES:
      return np.dtype(_FLOAT_DTYPES[stored])
    return np.dtype(np.float32)

  def _read(self, name):
    """A stored tensor in its _dtype, by its canonical name."""
    value = read_tensor(self._file_of(name), self._stored[name], name)
    return value.astype(self._dtype(name), copy=False)

  def get_variable_to_shape_map(self):
    """{original name: shape} of the folder's tensors; a stored tensor
    that is none of the architecture's is listed under its own name."""
    num_labels = num_labels_of(self.architecture_name, self.labels)
    shapes = {original: expected_shape(self.config, original, num_labels)
              for original in self._names}
    shapes.update({name: self._stored_shape(name) for name in self._unused})
    return shapes

  def get_variable_to_dtype_map(self):
    """What get_tensor gives: float32 for every tensor, or each one's own
    with stored_dtypes (the model's are floats: others are refused on
    opening)."""
    return {name: self._dtype(self._names.get(name, name))
            for name in self.get_variable_to_shape_map()}

  def get_tensor(self, original):
    """The tensor under its original name, in the original's layout."""
    if original in self._unused:
      return self._read(original)
    value = self._read(self._names[original])
    if _is_transposed(original):
      value = np.ascontiguousarray(value.T)
    return value


def _shard_files(folder, index_file):
  """{stored name: shard file} from model.safetensors.index.json, every
  shard checked (model_files.model_file) before any is opened."""
  weight_map = read_json_object(index_file).get("weight_map")
  if not isinstance(weight_map, dict):
    raise ValueError(f"{index_file}: no \"weight_map\" object")
  shards = {}
  for name, entry in weight_map.items():
    if not isinstance(entry, str):
      raise ValueError(f"{index_file}: weight_map[{name!r}] is {entry!r}, "
                       f"not the name of a shard file")
    if entry not in shards:
      shards[entry] = model_file(folder, entry, listed_in=index_file)
      if shards[entry] is None:
        raise FileNotFoundError(f"{index_file}: weight_map[{name!r}] names "
                                f"{entry!r}, which {folder} does not have")
  return {name: shards[entry] for name, entry in weight_map.items()}


def _labels(values, architecture_name, config_file):
  """(labels, problem_type): id2label's labels in id order, else
  default_labels' for num_labels."""
  labels, problem_type = labels_of_fields(values, config_file)
  if labels is not None:
    return labels, problem_type
  count = values.get("num_labels", 2)
  if not isinstance(count, int) or isinstance(count, bool) or count < 1:
    raise ValueError(f"{config_file}: \"num_labels\" is {count!r}; "
                     f"expected a whole number of at least 1")
  return default_labels(architecture_name, count), problem_type


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
                       problem_type=None):
  """config.json's object for `config` as `architecture_name`."""
  values = {"architectures": [architecture_name]}
  values.update(to_huggingface_dict(config))
  values["pad_token_id"] = 0
  if architecture_name in LABELLED_ARCHITECTURES:
    values.update(labels_fields(labels, problem_type))
  return values


def write_folder_files(directory, config, architecture_name, tensors,
                       do_lower_case, labels, problem_type=None,
                       model_max_length=None):
  """Writes config.json, model.safetensors and tokenizer_config.json into
  `directory` (a new one the caller renames into place).

  Args:
    tensors: {original name: numpy array} of the architecture's tensors
      (see original_names), in the original layout.
  """
  from safetensors.numpy import save_file  # pylint: disable=g-import-not-at-top
  prefix = ARCHITECTURES[architecture_name].prefix
  head_names = ARCHITECTURES[architecture_name].head_names
  weights = {}
  for original in list(tensors):
    value = tensors.pop(original)  # each array released as it is moved
    if _is_transposed(original):
      value = np.ascontiguousarray(value.T)
    name = head_names.get(original) or huggingface_name(original, prefix)
    weights[name] = value
  save_file(weights, os.path.join(directory, WEIGHTS_FILE),
            metadata={"format": "pt"})
  _write_json(os.path.join(directory, CONFIG_FILE),
              huggingface_config(config, architecture_name, labels,
                                 problem_type))
  _write_json(os.path.join(directory, TOKENIZER_CONFIG_FILE),
              {"do_lower_case": bool(do_lower_case),
               "tokenizer_class": "BertTokenizer",
               "model_max_length": (model_max_length or
                                    config.max_position_embeddings)})


def _write_json(path, values):
  with storage.open_file(path, "w") as writer:
    writer.write(json.dumps(values, indent=2, sort_keys=True) + "\n")
