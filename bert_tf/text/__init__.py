"""In-graph (TensorFlow ops) tokenisation and input packing for SavedModels."""

from bert_tf.text.packing import pack_inputs, truncated_pair_lengths
from bert_tf.text.tokenizer import InGraphTokenizer
