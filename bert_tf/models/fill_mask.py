"""fill_mask: a pretrainer's guesses for the [MASK]s of a text, as
transformers' fill-mask pipeline gives them."""

import numbers

import tensorflow as tf

from bert_tf.models.pretrainer import BertPretrainer
from bert_tf.text.preprocessor import is_number
from bert_tf.wordpiece import rules

# transformers' fill-mask pipeline's default (and its top_k=None).
_TOP_K = 5
# The most texts run at once: memory stays bounded for a long list.
_BATCH_SIZE = 32


def fill_mask(pretrainer, text, top_k=_TOP_K):
  """The top_k tokens (word pieces as the vocabulary spells them, "##"
  kept) and their probabilities for each [MASK] in text, as transformers'
  fill-mask pipeline: [(token, score), ...] for one [MASK], a list of
  those for several.

  Args:
    pretrainer: a BertPretrainer with its preprocessor (its vocabulary,
      casing and tokenization rules): BertPretrainer.from_pretrained(dir).
    text: a string with at least one "[MASK]", which is kept whole; the
      rest is tokenised by the preprocessor's rules (a Hugging Face
      folder's keep its other special tokens whole too, as transformers;
      an original checkpoint's split them, as the original). [CLS] and
      [SEP] are added, the sequence cut to the preprocessor's
      max_seq_length. Or a list of such strings, as the pipeline takes:
      then a list of their results, one per text.
    top_k: how many guesses for each [MASK]: 1 to the vocabulary's size;
      None for 5, as the pipeline.

  Raises:
    TypeError: pretrainer is not a BertPretrainer.
    ValueError: no preprocessor, a text that is not a str, top_k out of
      range, or no [MASK] left in a sequence.
  """
  preprocessor = _preprocessor_of(pretrainer)
  top_k = _checked_top_k(_TOP_K if top_k is None else top_k,
                         preprocessor.vocab_size)
  if isinstance(text, list):
    texts = [_checked_text(item, f"text[{index}]")
             for index, item in enumerate(text)]
  else:
    texts = [_checked_text(text, "text")]
  sequences, positions = _masked_sequences(preprocessor, texts)
  tokens = {index: token for token, index in
            preprocessor.tokenizer.vocab.items()}
  results = []
  for start in range(0, len(texts), _BATCH_SIZE):
    chunk = slice(start, start + _BATCH_SIZE)
    results += _guesses(pretrainer, sequences[chunk], positions[chunk],
                        top_k, tokens)
  return results if isinstance(text, list) else results[0]


def _guesses(pretrainer, sequences, positions, top_k, tokens):
  """fill_mask's result for each of a batch of sequences (lists of ids),
  given the positions of their [MASK]s; tokens: {id: token}."""
  ids = tf.ragged.constant(sequences, tf.int32)
  logits = pretrainer({"input_ids": ids.to_tensor(0),
                       "input_mask": tf.ones_like(ids).to_tensor(0),
                       "segment_ids": tf.zeros_like(ids).to_tensor(0),
                       "masked_lm_positions": tf.ragged.constant(
                           positions, tf.int32).to_tensor(0)},
                      training=False)["masked_lm_logits"]
  scores, best = tf.math.top_k(tf.nn.softmax(tf.cast(logits, tf.float32)),
                               k=top_k)
  results = []
  for masks, text_best, text_scores in zip(positions, best.numpy(),
                                           scores.numpy()):
    guesses = [list(zip(map(tokens.get, mask_best.tolist()),
                        mask_scores.tolist()))
               for mask_best, mask_scores in zip(text_best[:len(masks)],
                                                 text_scores[:len(masks)])]
    results.append(guesses[0] if len(masks) == 1 else guesses)
  return results


def _preprocessor_of(pretrainer):
  """The pretrainer's preprocessor, or an error naming what is missing."""
  if not isinstance(pretrainer, BertPretrainer):
    raise TypeError(f"fill_mask: pretrainer is a {type(pretrainer).__name__}"
                    f"; expected a BertPretrainer (its masked-LM head "
                    f"guesses): BertPretrainer.from_pretrained(dir)")
  preprocessor = pretrainer.preprocessor
  if preprocessor is None:
    raise ValueError(f"fill_mask: the {type(pretrainer).__name__} has no "
                     "preprocessor to take its vocabulary from; load it with "
                     "BertPretrainer.from_pretrained(dir)")
  if rules.MASK_TOKEN not in preprocessor.tokenizer.vocab:
    raise ValueError(f"fill_mask: the preprocessor's vocabulary has no "
                     f"{rules.MASK_TOKEN} token")
  return preprocessor


def _checked_top_k(top_k, vocab_size):
  if not is_number(top_k, numbers.Integral) or not 1 <= top_k <= vocab_size:
    raise ValueError(f"fill_mask: top_k={top_k!r}; expected an integer from "
                     f"1 to the vocabulary's size, {vocab_size}")
  return int(top_k)


def _checked_text(text, argument):
  """text, a str that UTF-8 can encode, or a ValueError naming it."""
  if not isinstance(text, str):
    kind = "None" if text is None else type(text).__name__
    raise ValueError(f"fill_mask: {argument} is {kind}; expected a str with "
                     f"a {rules.MASK_TOKEN}, or a list of them")
  try:
    text.encode("utf-8")
  except UnicodeEncodeError:
    raise ValueError(f"fill_mask: {argument} holds a lone surrogate, which "
                     "UTF-8 cannot encode") from None
  return text


def _masked_sequences(preprocessor, texts):
  """(each text's [CLS] text [SEP] ids, the positions of its [MASK]s), as
  lists: each text split at its [MASK]s, the parts tokenised at once by the
  preprocessor's tokenizer, the sequence cut to its max_seq_length."""
  tokenizer = preprocessor.tokenizer
  vocab, length = tokenizer.vocab, preprocessor.max_seq_length
  parts = [text.split(rules.MASK_TOKEN) for text in texts]
  part_ids = iter(tokenizer(tf.constant(
      [part for text_parts in parts for part in text_parts],
      tf.string)).to_list())
  sequences, positions = [], []
  for text, text_parts in zip(texts, parts):
    ids = [vocab[rules.CLS_TOKEN]]
    for index in range(len(text_parts)):
      if index:
        ids.append(vocab[rules.MASK_TOKEN])
      ids.extend(next(part_ids))
    ids = ids[:length - 1] + [vocab[rules.SEP_TOKEN]]
    masks = [index for index, token in enumerate(ids)
             if token == vocab[rules.MASK_TOKEN]]
    if not masks:
      shown = text if len(text) <= 60 else f"{text[:60]}..."
      raise ValueError(f"fill_mask: no {rules.MASK_TOKEN} in the first "
                       f"{length} tokens of {shown!r}")
    sequences.append(ids)
    positions.append(masks)
  return sequences, positions
