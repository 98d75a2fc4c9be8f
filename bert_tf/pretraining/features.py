"""The original pretraining TFRecord features: names, lengths, encoding.

create_pretraining_data writes them and run_pretraining parses them; one
definition keeps the two in step. Writing needs no TensorFlow: instances are
encoded straight to tf.train.Example bytes (equal to protobuf's
deterministic serialisation), several times faster than building protos.
"""

import functools
import itertools
import struct

from bert_tf.data import tfrecords

INT_FEATURES_PER_TOKEN = ("input_ids", "input_mask", "segment_ids")
INT_FEATURES_PER_PREDICTION = ("masked_lm_positions", "masked_lm_ids")
FLOAT_FEATURES_PER_PREDICTION = ("masked_lm_weights",)
NEXT_SENTENCE_LABELS = "next_sentence_labels"
FEATURE_NAMES = (INT_FEATURES_PER_TOKEN + INT_FEATURES_PER_PREDICTION
                 + FLOAT_FEATURES_PER_PREDICTION + (NEXT_SENTENCE_LABELS,))


def feature_spec(max_seq_length, max_predictions_per_seq):
  """The tf.io.parse_single_example spec, as the original run_pretraining."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  spec = {name: tf.io.FixedLenFeature([max_seq_length], tf.int64)
          for name in INT_FEATURES_PER_TOKEN}
  spec.update({name: tf.io.FixedLenFeature([max_predictions_per_seq],
                                           tf.int64)
               for name in INT_FEATURES_PER_PREDICTION})
  spec.update({name: tf.io.FixedLenFeature([max_predictions_per_seq],
                                           tf.float32)
               for name in FLOAT_FEATURES_PER_PREDICTION})
  spec[NEXT_SENTENCE_LABELS] = tf.io.FixedLenFeature([1], tf.int64)
  return spec


def _compute_varint(value):
  out = bytearray()
  while value > 0x7F:
    out.append((value & 0x7F) | 0x80)
    value >>= 7
  out.append(value)
  return bytes(out)


# Varint bytes of 0, 1, 2, ...: ids, positions and lengths are looked up.
_VARINTS = [_compute_varint(value) for value in range(1 << 14)]


def _grow_varints(top):
  _VARINTS.extend(_compute_varint(value)
                  for value in range(len(_VARINTS), top + 1))


def _varint(value):
  if value >= len(_VARINTS):
    _grow_varints(value)
  return _VARINTS[value]


def _packed_varints(values):
  try:
    return b"".join(map(_VARINTS.__getitem__, values))
  except IndexError:
    _grow_varints(max(values))
    return _packed_varints(values)


_ONE, _ZERO = _VARINTS[1], _VARINTS[0]
_FLOAT_ONE, _FLOAT_ZERO = struct.pack("<f", 1.0), struct.pack("<f", 0.0)


def _delimited(field_tag, payload):
  """A length-delimited protobuf field."""
  return field_tag + _varint(len(payload)) + payload


# Features.feature map entries begin with their key (field 1).
_KEYS = {name: _delimited(b"\x0a", name.encode()) for name in FEATURE_NAMES}


def _feature_entry(name, feature):
  """One entry of Features.feature (a map<string, Feature>)."""
  return _delimited(b"\x0a", _KEYS[name] + _delimited(b"\x12", feature))


def _int64_feature(packed_varints):
  # Feature.int64_list (3) holding Int64List.value (1), packed.
  return _delimited(b"\x1a", _delimited(b"\x0a", packed_varints))


def _float_feature(packed_floats):
  # Feature.float_list (2) holding FloatList.value (1), packed.
  return _delimited(b"\x12", _delimited(b"\x0a", packed_floats))


def serialize_instance(instance, max_seq_length, max_predictions_per_seq):
  """A TrainingInstance as the original's padded tf.train.Example, serialized.

  Raises:
    ValueError: the instance is longer than max_seq_length.
  """
  length = len(instance.input_ids)
  if length > max_seq_length:
    raise ValueError(f"instance of {length} tokens exceeds max_seq_length "
                     f"{max_seq_length}")
  prediction_padding = _ZERO * (max_predictions_per_seq
                                - len(instance.masked_lm_positions))
  input_ids = (_packed_varints(instance.input_ids)
               + _ZERO * (max_seq_length - length))
  masked_lm_ids = _packed_varints(instance.masked_lm_ids) + prediction_padding
  masked_lm_positions = (_packed_varints(instance.masked_lm_positions)
                         + prediction_padding)
  # Example.features (1) holding the Features.feature entries in the order
  # of protobuf's deterministic serialisation (sorted keys).
  features = b"".join([
      _int64_entry_head("input_ids", len(input_ids)), input_ids,
      _input_mask_entry(length, max_seq_length),
      _int64_entry_head("masked_lm_ids", len(masked_lm_ids)), masked_lm_ids,
      _int64_entry_head("masked_lm_positions", len(masked_lm_positions)),
      masked_lm_positions,
      _weights_entry(len(instance.masked_lm_positions),
                     max_predictions_per_seq),
      _NEXT_SENTENCE_ENTRIES[instance.is_random_next],
      _segment_ids_entry(instance.first_segment_length, length,
                         max_seq_length),
  ])
  return b"\x0a" + _varint(len(features)) + features


def _int64_entry(name, packed_varints):
  return _feature_entry(name, _int64_feature(packed_varints))


@functools.lru_cache(maxsize=None)
def _int64_entry_head(name, length):
  """The bytes of _int64_entry before its packed varints: field tags and
  lengths, which depend on the varints' length alone."""
  entry = _int64_entry(name, bytes(length))
  return entry[:len(entry) - length]


_NEXT_SENTENCE_ENTRIES = {is_random_next: _int64_entry(
    NEXT_SENTENCE_LABELS, _ONE if is_random_next else _ZERO)
                          for is_random_next in (False, True)}


# Features that depend on a few lengths only are encoded once per value.
@functools.lru_cache(maxsize=None)
def _input_mask_entry(length, max_seq_length):
  return _int64_entry("input_mask",
                      _ONE * length + _ZERO * (max_seq_length - length))


@functools.lru_cache(maxsize=None)
def _segment_ids_entry(first_segment_length, length, max_seq_length):
  return _int64_entry("segment_ids", _ZERO * first_segment_length
                      + _ONE * (length - first_segment_length)
                      + _ZERO * (max_seq_length - length))


@functools.lru_cache(maxsize=None)
def _weights_entry(num_predictions, max_predictions_per_seq):
  return _feature_entry("masked_lm_weights", _float_feature(
      _FLOAT_ONE * num_predictions
      + _FLOAT_ZERO * (max_predictions_per_seq - num_predictions)))


def example_lengths(example):
  """(max_seq_length, max_predictions_per_seq) a parsed Example was padded to.

  Raises:
    ValueError: a feature of the original layout is missing.
  """
  features = example.features.feature
  missing = [name for name in FEATURE_NAMES if name not in features]
  if missing:
    raise ValueError(f"not a pretraining example: no feature(s) {missing}")

  def length(name):
    feature = features[name]
    return len(feature.int64_list.value) + len(feature.float_list.value)

  return length("input_ids"), length("masked_lm_positions")


def parse_record(record, where):
  """(tf.train.Example, example_lengths) of one pretraining record.

  Raises:
    ValueError: naming `where`, for bytes that are not a tf.train.Example or
      an Example without the original's features.
  """
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from google.protobuf import message  # pylint: disable=g-import-not-at-top
  try:
    example = tf.train.Example.FromString(record)
    return example, example_lengths(example)
  except message.DecodeError:
    raise ValueError(f"{where} is not a tf.train.Example") from None
  except ValueError as error:
    raise ValueError(f"{where}: {error}") from None


def check_records(path, max_seq_length, max_predictions_per_seq,
                  vocab_size=None, max_records=None):
  """Checks that a file's records are what run_pretraining will be given,
  before training dies on "Can't parse serialized Example" or "corrupted
  record", which name no file.

  Each record's checksums, its layout (the original's features), its lengths
  (the flags it must be read with) and, with vocab_size, its token ids (which
  must fit the model's embedding table) are checked.

  Args:
    path: a TFRecord file of pretraining examples.
    max_seq_length, max_predictions_per_seq: the training flags.
    vocab_size: the config's vocab_size, or None not to check ids.
    max_records: how many records to check (None: all).

  Returns:
    The number of records checked.

  Raises:
    ValueError: naming the file, the record and the flag to change.
  """
  checked = 0
  records = itertools.islice(tfrecords.read_records(path), max_records)
  for index, record in enumerate(records):
    example, (seq_length, predictions) = parse_record(
        record, f"{path}: record {index}")
    if seq_length != max_seq_length:
      raise ValueError(
          f"{path}: record {index} has {seq_length} input_ids, but "
          f"--max_seq_length={max_seq_length}; pass --max_seq_length="
          f"{seq_length} (the value create_pretraining_data was run with)")
    if predictions != max_predictions_per_seq:
      raise ValueError(
          f"{path}: record {index} has {predictions} masked_lm_positions, "
          f"but --max_predictions_per_seq={max_predictions_per_seq}; pass "
          f"--max_predictions_per_seq={predictions} (the value "
          f"create_pretraining_data was run with)")
    if vocab_size is not None:
      _check_ids(example, vocab_size, f"{path}: record {index}")
    checked += 1
  return checked


def _check_ids(example, vocab_size, where):
  features = example.features.feature
  for name in ("input_ids", "masked_lm_ids"):
    outside = [value for value in features[name].int64_list.value
               if not 0 <= value < vocab_size]
    if outside:
      raise ValueError(
          f"{where} has {name} {outside[0]}, but the model's vocab_size is "
          f"{vocab_size}: the file was made with a vocabulary that does not "
          f"fit the bert_config.json")
