"""BertMaskedLMPreprocessor: raw text to masked-LM training batches."""

import numbers

import keras
import tensorflow as tf

from bert_tf.text import masking
from bert_tf.text.packing import packed_texts
from bert_tf.text.preprocessor import BertPreprocessor, is_number
from bert_tf.wordpiece.masking_vocabulary import MaskingVocabulary


# create_pretraining_data's --max_predictions_per_seq default.
_MAX_PREDICTIONS = 20


@keras.saving.register_keras_serializable(package="bert_tf")
class BertMaskedLMPreprocessor(BertPreprocessor):
  """A BertPreprocessor that also masks, as create_pretraining_data masks
  (bert_tf.text.masking): what BertPretrainer.fit takes raw text through.

  Args:
    (BertPreprocessor's, and create_pretraining_data's flags:)
    max_predictions_per_seq: the most masked tokens in a sequence, at most
      max_seq_length; by default create_pretraining_data's 20, or
      max_seq_length where that is less.
    masked_lm_prob: the share of a sequence's tokens masked.
    do_whole_word_mask: mask whole words ("##" pieces with their word).

  Call: as BertPreprocessor (text to the encoder's ids, unmasked); masked()
  makes a training batch.
  """

  def __init__(self, vocab_file=None, do_lower_case=True, max_seq_length=128,
               max_predictions_per_seq=None, masked_lm_prob=0.15,
               do_whole_word_mask=False, **kwargs):
    super().__init__(vocab_file, do_lower_case, max_seq_length, **kwargs)
    max_seq_length = self.max_seq_length
    if max_predictions_per_seq is None:
      max_predictions_per_seq = min(_MAX_PREDICTIONS, max_seq_length)
    # Checked here, before a config's numbers size any tensor.
    if not is_number(max_predictions_per_seq, numbers.Integral) or \
        not 1 <= max_predictions_per_seq <= max_seq_length:
      raise ValueError(f"max_predictions_per_seq={max_predictions_per_seq!r}"
                       f": expected an integer from 1 to max_seq_length "
                       f"({max_seq_length})")
    if not is_number(masked_lm_prob, numbers.Real) or \
        not 0 < masked_lm_prob <= 1:
      raise ValueError(f"masked_lm_prob={masked_lm_prob!r}: expected a "
                       "number in (0, 1]")
    self.options = masking.MaskingOptions(
        int(max_predictions_per_seq), float(masked_lm_prob),
        do_whole_word_mask)

  def masked(self, texts, seed):
    """Keras' (x, y, sample_weight) for a batch of single texts [batch]:
    x the encoder's ids, masked, and masked_lm_positions; y
    (masked_lm_ids, next_sentence_labels); sample_weight
    (masked_lm_weights, 0 for each next-sentence label: single texts have
    no next sentence to learn). seed: int [2], new for each batch (tf.data's
    Dataset.random), so each epoch draws new masks."""
    packed = packed_texts(self.tokenizer, self.max_seq_length,
                          tf.convert_to_tensor(texts, tf.string))
    vocabulary = MaskingVocabulary(self.tokenizer.vocabulary.vocab)
    input_ids, positions, ids, weights = masking.mask_tokens(
        packed["input_ids"], packed["input_mask"], vocabulary, self.options,
        seed)
    no_next_sentence = tf.zeros_like(packed["input_ids"][:, 0])
    features = {**packed, "input_ids": input_ids,
                "masked_lm_positions": positions}
    return (features, (ids, no_next_sentence),
            (weights, tf.cast(no_next_sentence, tf.float32)))

  def get_config(self):
    config = super().get_config()
    config.update(max_predictions_per_seq=self.options.max_predictions_per_seq,
                  masked_lm_prob=self.options.masked_lm_prob,
                  do_whole_word_mask=self.options.do_whole_word_mask)
    return config
