"""Reading a Hugging Face BERT folder's weights under the original names
(HuggingFaceFolder): config.json, model.safetensors or its shards, checked
against the architecture's names and shapes before anything is loaded."""

import os
import re

import ml_dtypes
import numpy as np

from bert_tf.checkpoints.huggingface import (
    ARCHITECTURES, CONFIG_FILE, MASKED_LM_NAMES, NEXT_SENTENCE_NAMES,
    POOLER_SCOPE, UNMAPPED, WEIGHTS_FILE, WEIGHTS_INDEX_FILE, canonical_name,
    default_labels, huggingface_name, is_transposed, num_labels_of,
    original_names)
from bert_tf.checkpoints.huggingface.config import from_huggingface_dict
from bert_tf.checkpoints.names import (check_layer_count, check_regression,
                                       encoder_names, expected_shape,
                                       labels_of_fields)
from bert_tf.checkpoints.safetensors_files import read_tensor, tensor_headers
from bert_tf.files import storage
from bert_tf.files.json_files import read_json_object
from bert_tf.files.model_files import model_file, required_model_file


# Weights saved by torch.save: pickles, which can run code when loaded.
_PICKLE_FILES = ("pytorch_model.bin", "pytorch_model.bin.index.json")


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


class HuggingFaceFolder:
  """A Hugging Face BERT folder, opened and checked, read by original names.

  It answers tf.train.CheckpointReader's two questions
  (get_variable_to_shape_map, get_tensor), so model_weights.load_weights
  reads it as it reads an original checkpoint.

  Attributes:
    folder: the folder.
    config: its BertConfig (config.json mapped, see BertConfig).
    architecture_name: the transformers class, from config.json's
      "architectures" (or, where it has none, from the tensor names).
    labels: the class labels in the head's row order (id2label, else
      transformers' LABEL_i for num_labels).
    problem_type: config.json's (PROBLEM_TYPES), or None.
    config_values: config.json's object, all its fields (a
      sentence-transformers CrossEncoder's activation among them).

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
    self._file_headers = {}  # {path: tensor_headers(path)}
    self._kept = {}  # {canonical name: a tensor read to check, not yet given}
    self._files, self._weights_file = self._weight_files()
    self._headers = self._read_headers()
    self._stored = self._stored_names()
    self._check_layer_count(config_file)
    self.architecture_name = self._architecture(values, config_file)
    architecture = ARCHITECTURES.get(self.architecture_name, UNMAPPED)
    self.labels, self.problem_type = _labels(values, self.architecture_name,
                                             config_file)
    self.config_values = values
    # The class's tensors (its pooler may be left out), and the pretraining
    # heads and pooler wherever they are stored too. (A dict of names: in
    # order, and each looked up at once.)
    required = {name: None for name in original_names(self.config,
                                                      architecture)
                if not name.startswith(POOLER_SCOPE)}
    optional = [name for name in [
        *encoder_names(self.config), *MASKED_LM_NAMES,
        *NEXT_SENTENCE_NAMES] if name not in required]
    head_names = {**MASKED_LM_NAMES, **NEXT_SENTENCE_NAMES,
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
              for name in self._headers_of(weights_file)}, weights_file
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
      held = self._headers_of(path)
      for name in names:
        if name not in held:
          raise ValueError(f"{path}: no tensor {name}, which "
                           f"{WEIGHTS_INDEX_FILE} places in it")
        headers[name] = held[name]
    return headers

  def _headers_of(self, path):
    """A weights file's tensor_headers, each file's read once."""
    if path not in self._file_headers:
      self._file_headers[path] = tensor_headers(path)
    return self._file_headers[path]

  def _stored_names(self):
    """{canonical name: name as stored}, position ids left out."""
    stored = {}
    for name in self._files:
      if canonical_name(name) != _POSITION_IDS:
        stored.setdefault(canonical_name(name), name)
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
      if is_transposed(original):
        shape = shape[::-1]
      expected = expected_shape(self.config, original, num_labels)
      if shape != expected:
        raise ValueError(
            f"{self._file_of(name)}: tensor {name} is shaped "
            f"{self._stored_shape(name)}, but {CONFIG_FILE} makes it "
            f"{expected[::-1] if is_transposed(original) else expected}")
    if _DECODER_WEIGHT in self._stored:
      embeddings = self._names["bert/embeddings/word_embeddings"]
      self._kept[embeddings] = self._read(embeddings)
      if not np.array_equal(self._read(_DECODER_WEIGHT),
                            self._kept[embeddings]):
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
    """A stored tensor in its _dtype, by its canonical name: one read to
    check is given once, not read again."""
    if name in self._kept:
      return self._kept.pop(name)
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
    if is_transposed(original):
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
  labels = default_labels(architecture_name, count)
  check_regression(labels, problem_type, config_file)
  return labels, problem_type
