"""BertMultipleChoicePreprocessor: contexts and their endings to
BertMultipleChoice's inputs, as a Keras layer."""

import keras
import tensorflow as tf

from bert_tf.text.preprocessor import BertPreprocessor, as_text_tensors
from bert_tf.text.swag.packing import packed_choices

_INPUTS = ("contexts", "endings")


@keras.saving.register_keras_serializable(package="bert_tf")
class BertMultipleChoicePreprocessor(BertPreprocessor):
  """(contexts, endings) -> {input_ids, input_mask, segment_ids} [batch,
  choices, max_seq_length]: `[CLS] context [SEP] ending [SEP]` for each
  ending, as run_swag packs SWAG's rows and its export's serve_text packs
  a request (bert_tf.text.swag.packing).

  Args: BertPreprocessor's.

  Call: a pair (contexts, endings): contexts a string tensor [batch] (or a
    list of Python strings), endings [batch, choices] (or a list of lists
    of Python strings), the same number of endings for every context.

  Example:
    >>> preprocessor = BertMultipleChoicePreprocessor("vocab.txt", True, 8)
    >>> preprocessor((["A man sits."], [["He eats.", "He flies."]]))[
    ...     "input_ids"].shape
    TensorShape([1, 2, 8])
  """

  def __call__(self, inputs, **kwargs):
    # Checked before Keras' call, which would wrap a refusal in lines of
    # its own.
    return super().__call__(checked_inputs(inputs, type(self).__name__),
                            **kwargs)

  def call(self, inputs):
    if self.tokenizer.vocab_file is None:
      raise ValueError(f"{type(self).__name__} has no vocabulary: give "
                       "vocab_file, or load the layer from a .keras file")
    contexts, endings = inputs
    with tf.control_dependencies([tf.debugging.assert_equal(
        tf.shape(contexts)[0], tf.shape(endings)[0],
        message=f"{type(self).__name__}: contexts and endings differ in "
                "batch size")]):
      return packed_choices(self.tokenizer, self.max_seq_length,
                            tf.identity(contexts), endings)

  def compute_output_spec(self, inputs):
    shape = tuple(inputs[1].shape) + (self.max_seq_length,)
    return {name: keras.KerasTensor(shape, dtype="int32")
            for name in ("input_ids", "input_mask", "segment_ids")}


def _endings_tensor(endings, name):
  """A list of lists of endings as a string tensor [batch, choices]."""
  try:
    return tf.constant(endings, tf.string)
  except ValueError:  # rows of different lengths
    raise ValueError(f"{name}: endings has rows of different lengths; every "
                     "context needs the same number of endings") from None


def checked_inputs(inputs, name):
  """(contexts [batch], endings [batch, choices]) as string tensors (lists
  of Python strings converted), or a ValueError naming what is wrong
  (name: who was given them); batch sizes unknown until a graph runs are
  checked by call."""
  if not isinstance(inputs, (tuple, list)) or len(inputs) != 2:
    raise ValueError(f"{name}: expected a pair (contexts, endings), got "
                     f"{type(inputs).__name__}")
  if any(isinstance(value, tf.RaggedTensor) for value in inputs):
    raise ValueError(f"{name}: endings is ragged; every context needs the "
                     "same number of endings")
  contexts = as_text_tensors(inputs[0])
  endings = inputs[1]
  if isinstance(endings, list):
    endings = _endings_tensor(endings, name)
  for input_name, value, rank in zip(_INPUTS, (contexts, endings), (1, 2)):
    dtype = getattr(value, "dtype", None)
    if dtype is not None and tf.as_dtype(dtype) != tf.string:
      raise ValueError(f"{name}: {input_name} holds {tf.as_dtype(dtype).name}"
                       "; expected strings")
    shape = getattr(value, "shape", None)
    if shape is None or len(shape) != rank:
      got = (f"is a {type(value).__name__}" if shape is None
             else f"has shape {tuple(shape)}")
      raise ValueError(f"{name}: {input_name} {got}; expected "
                       f"{('[batch]', '[batch, choices]')[rank - 1]}")
  if endings.shape[1] == 0:
    raise ValueError(f"{name}: endings has shape {tuple(endings.shape)}; "
                     "expected at least one ending per context")
  size_a, size_b = contexts.shape[0], endings.shape[0]
  if size_a is not None and size_b is not None and size_a != size_b:
    raise ValueError(f"{name}: {size_a} contexts but {size_b} rows of "
                     "endings")
  return contexts, endings
