"""fill_mask: a pretrainer's guesses for the [MASK]s of a text, as
transformers' fill-mask pipeline gives them."""

import numpy as np
import tensorflow as tf

from bert_tf.wordpiece import rules
from bert_tf.wordpiece.tokenizer import FullTokenizer


def fill_mask(pretrainer, text, top_k=5):
  """The top_k tokens (word pieces as the vocabulary spells them, "##"
  kept) and their probabilities for each [MASK] in text, as transformers'
  fill-mask pipeline: [(token, score), ...] for one [MASK], a list of
  those for several.

  Args:
    pretrainer: a BertPretrainer with its preprocessor (its vocabulary and
      casing): BertPretrainer.from_pretrained(dir).
    text: a string with at least one "[MASK]", which is kept whole (the
      rest is tokenised as the original tokenises; [CLS] and [SEP] are
      added, the sequence cut to the preprocessor's max_seq_length).
    top_k: how many guesses for each [MASK].

  Raises:
    ValueError: no preprocessor, or no [MASK] left in the sequence.
  """
  preprocessor = pretrainer.preprocessor
  if preprocessor is None:
    raise ValueError(f"fill_mask: the {type(pretrainer).__name__} has no "
                     "preprocessor to take its vocabulary from; load it with "
                     "BertPretrainer.from_pretrained(dir)")
  tokenizer = FullTokenizer(preprocessor.tokenizer.vocabulary,
                            preprocessor.do_lower_case)
  tokens = [rules.CLS_TOKEN]
  for index, part in enumerate(text.split(rules.MASK_TOKEN)):
    if index:
      tokens.append(rules.MASK_TOKEN)
    tokens.extend(tokenizer.tokenize(part))
  tokens = tokens[:preprocessor.max_seq_length - 1] + [rules.SEP_TOKEN]
  positions = [index for index, token in enumerate(tokens)
               if token == rules.MASK_TOKEN]
  if not positions:
    raise ValueError(f"fill_mask: no {rules.MASK_TOKEN} in the first "
                     f"{preprocessor.max_seq_length} tokens of {text!r}")
  ids = tf.constant([tokenizer.convert_tokens_to_ids(tokens)], tf.int32)
  logits = pretrainer({"input_ids": ids, "input_mask": tf.ones_like(ids),
                       "segment_ids": tf.zeros_like(ids),
                       "masked_lm_positions": tf.constant([positions])},
                      training=False)["masked_lm_logits"][0]
  scores, best = tf.math.top_k(tf.nn.softmax(tf.cast(logits, tf.float32)),
                               k=top_k)
  guesses = [list(zip(tokenizer.convert_ids_to_tokens(row.tolist()),
                      np.asarray(row_scores).tolist()))
             for row, row_scores in zip(best.numpy(), scores.numpy())]
  return guesses[0] if len(guesses) == 1 else guesses
