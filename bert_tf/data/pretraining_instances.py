"""Training instances (sentence pairs with masked tokens), as the original.

create_pretraining_data.py's output is fixed by its sequence of calls on one
random.Random; every function here makes the same calls in the same order
with the same arguments, so the same seed gives the same instances. Tokens
are vocabulary ids instead of strings; what the original decided by string
([CLS]/[SEP], the "##" prefix, random replacement words) is decided by the
ids of those strings.
"""

import dataclasses
import logging
import time

import numpy as np

logger = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class InstanceOptions:
  """The original flags that shape instances."""
  max_seq_length: int = 128
  max_predictions_per_seq: int = 20
  masked_lm_prob: float = 0.15
  short_seq_prob: float = 0.1
  dupe_factor: int = 10
  do_whole_word_mask: bool = False


@dataclasses.dataclass
class TrainingInstance:
  """One sentence pair: [CLS] a [SEP] b [SEP] with masks applied.

  Attributes:
    input_ids: token ids, masked tokens replaced.
    first_segment_length: tokens with segment id 0 ([CLS], a, [SEP]).
    masked_lm_positions: positions of the predictions, ascending.
    masked_lm_ids: original ids at those positions.
    is_random_next: whether b was drawn from another document.
  """
  input_ids: list
  first_segment_length: int
  masked_lm_positions: list
  masked_lm_ids: list
  is_random_next: bool


class Vocabulary:
  """What instance creation needs to know about vocab.txt, as ids.

  Args:
    vocab: {token: id} as tokenization.load_vocab returns it.
  """

  def __init__(self, vocab):
    self.cls_id = vocab["[CLS]"]
    self.sep_id = vocab["[SEP]"]
    self.mask_id = vocab["[MASK]"]
    # The original draws random words from list(vocab.keys()) and converts
    # the word back to its id, which for a repeated token is its last line.
    self.random_word_ids = [vocab[token] for token in vocab]
    is_continuation = np.zeros(max(vocab.values()) + 1, bool)
    for token, index in vocab.items():
      is_continuation[index] = token.startswith("##")
    self.is_continuation = is_continuation.tolist()


def create_training_instances(documents, vocabulary, options, rng):
  """All instances, shuffled, as the original create_training_instances.

  Args:
    documents: [[sentence ids, ...], ...], non-empty (documents.py).
    vocabulary: a Vocabulary.
    options: InstanceOptions.
    rng: a random.Random seeded with the original's random_seed.
  """
  rng.shuffle(documents)
  instances = []
  start = time.time()
  for dupe in range(options.dupe_factor):
    for document_index in range(len(documents)):
      instances.extend(_instances_from_document(
          documents, document_index, vocabulary, options, rng))
    logger.info("Pass %d/%d over %d documents: %d instances (%.0f/s)",
                dupe + 1, options.dupe_factor, len(documents), len(instances),
                len(instances) / (time.time() - start))
  rng.shuffle(instances)
  return instances


def _instances_from_document(documents, document_index, vocabulary, options,
                             rng):
  """create_instances_from_document, call for call."""
  document = documents[document_index]
  max_num_tokens = options.max_seq_length - 3
  target_seq_length = max_num_tokens
  if rng.random() < options.short_seq_prob:
    target_seq_length = rng.randint(2, max_num_tokens)

  instances = []
  chunk = []
  chunk_length = 0
  i = 0
  while i < len(document):
    chunk.append(document[i])
    chunk_length += len(document[i])
    if i == len(document) - 1 or chunk_length >= target_seq_length:
      a_end = 1
      if len(chunk) >= 2:
        a_end = rng.randint(1, len(chunk) - 1)
      tokens_a = [token for sentence in chunk[:a_end] for token in sentence]
      tokens_b = []
      if len(chunk) == 1 or rng.random() < 0.5:
        is_random_next = True
        target_b_length = target_seq_length - len(tokens_a)
        for _ in range(10):
          random_document_index = rng.randint(0, len(documents) - 1)
          if random_document_index != document_index:
            break
        random_document = documents[random_document_index]
        random_start = rng.randint(0, len(random_document) - 1)
        for sentence in random_document[random_start:]:
          tokens_b.extend(sentence)
          if len(tokens_b) >= target_b_length:
            break
        # The unused sentences of this chunk start the next one.
        i -= len(chunk) - a_end
      else:
        is_random_next = False
        tokens_b = [token for sentence in chunk[a_end:] for token in sentence]
      tokens_a, tokens_b = _truncate_seq_pair(tokens_a, tokens_b,
                                              max_num_tokens, rng)
      instances.append(_masked_instance(tokens_a, tokens_b, is_random_next,
                                        vocabulary, options, rng))
      chunk = []
      chunk_length = 0
    i += 1
  return instances


def _truncate_seq_pair(tokens_a, tokens_b, max_num_tokens, rng):
  """Drops tokens from the longer side, front or back at random.

  Tracks the kept ranges instead of deleting list heads one by one; the
  random calls are the original's.
  """
  a_start, a_end = 0, len(tokens_a)
  b_start, b_end = 0, len(tokens_b)
  while (a_end - a_start) + (b_end - b_start) > max_num_tokens:
    truncate_a = (a_end - a_start) > (b_end - b_start)
    from_front = rng.random() < 0.5
    if truncate_a:
      a_start, a_end = (a_start + 1, a_end) if from_front else (a_start,
                                                                a_end - 1)
    else:
      b_start, b_end = (b_start + 1, b_end) if from_front else (b_start,
                                                                b_end - 1)
  if a_end <= a_start or b_end <= b_start:
    raise AssertionError("truncation left an empty segment")
  return tokens_a[a_start:a_end], tokens_b[b_start:b_end]


def _masked_instance(tokens_a, tokens_b, is_random_next, vocabulary, options,
                     rng):
  tokens = [vocabulary.cls_id, *tokens_a, vocabulary.sep_id, *tokens_b,
            vocabulary.sep_id]
  positions, labels = _mask_tokens(tokens, vocabulary, options, rng)
  return TrainingInstance(
      input_ids=tokens,
      first_segment_length=len(tokens_a) + 2,
      masked_lm_positions=positions,
      masked_lm_ids=labels,
      is_random_next=is_random_next)


def _mask_tokens(tokens, vocabulary, options, rng):
  """create_masked_lm_predictions, in place on `tokens`.

  Returns:
    (masked_lm_positions, masked_lm_ids), by ascending position.
  """
  special = (vocabulary.cls_id, vocabulary.sep_id)
  is_continuation = vocabulary.is_continuation
  candidates = []
  for index, token in enumerate(tokens):
    if token in special:
      continue
    if options.do_whole_word_mask and candidates and is_continuation[token]:
      candidates[-1].append(index)
    else:
      candidates.append([index])
  rng.shuffle(candidates)

  num_to_predict = min(options.max_predictions_per_seq,
                       max(1, int(round(len(tokens) *
                                        options.masked_lm_prob))))
  original = list(tokens)
  masked = []
  covered = set()
  for index_set in candidates:
    if len(masked) >= num_to_predict:
      break
    if len(masked) + len(index_set) > num_to_predict:
      continue
    if any(index in covered for index in index_set):
      continue
    for index in index_set:
      covered.add(index)
      if rng.random() < 0.8:
        tokens[index] = vocabulary.mask_id
      elif rng.random() >= 0.5:
        random_words = vocabulary.random_word_ids
        tokens[index] = random_words[rng.randint(0, len(random_words) - 1)]
      masked.append(index)
  masked.sort()
  return masked, [original[index] for index in masked]
