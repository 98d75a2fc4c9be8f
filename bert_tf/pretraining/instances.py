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


def instance_passes(documents, vocabulary, options, rng):
  """The original create_training_instances up to its last step: yields
  the instances of each of its dupe_factor passes over the documents (a
  list) as soon as the pass is made. Its last step, the shuffle of all the
  instances, is then shuffle(instances, rng), or the same permutation of
  anything as long (shuffle's draws depend on the length alone).

  Args:
    documents: [[sentence ids, ...], ...], non-empty (documents.py).
    vocabulary: a masking_vocabulary.MaskingVocabulary.
    options: InstanceOptions.
    rng: a random.Random seeded with the original's random_seed.
  """
  shuffle(documents, rng)
  made = 0
  start = time.time()
  for dupe in range(options.dupe_factor):
    instances = []
    for document_index in range(len(documents)):
      instances.extend(_instances_from_document(
          documents, document_index, vocabulary, options, rng))
    made += len(instances)
    logger.info("Pass %d/%d over %d documents: %d instances (%.0f/s)",
                dupe + 1, options.dupe_factor, len(documents), made,
                made / (time.time() - start))
    yield instances


def _instances_from_document(documents, document_index, vocabulary, options,
                             rng):
  """create_instances_from_document, call for call."""
  document = documents[document_index]
  max_num_tokens = options.max_seq_length - 3
  target_seq_length = max_num_tokens
  if rng.random() < options.short_seq_prob:
    target_seq_length = randint(rng, 2, max_num_tokens)

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
        a_end = randint(rng, 1, len(chunk) - 1)
      tokens_a = [token for sentence in chunk[:a_end] for token in sentence]
      tokens_b = []
      if len(chunk) == 1 or rng.random() < 0.5:
        is_random_next = True
        target_b_length = target_seq_length - len(tokens_a)
        for _ in range(10):
          random_document_index = randint(rng, 0, len(documents) - 1)
          if random_document_index != document_index:
            break
        random_document = documents[random_document_index]
        random_start = randint(rng, 0, len(random_document) - 1)
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
    if (a_end - a_start) > (b_end - b_start):
      if rng.random() < 0.5:
        a_start += 1
      else:
        a_end -= 1
    elif rng.random() < 0.5:
      b_start += 1
    else:
      b_end -= 1
  if a_end <= a_start or b_end <= b_start:
    raise AssertionError("truncation left an empty segment")
  return tokens_a[a_start:a_end], tokens_b[b_start:b_end]


def _masked_instance(tokens_a, tokens_b, is_random_next, vocabulary, options,
                     rng):
  tokens = [vocabulary.cls_id, *tokens_a, vocabulary.sep_id, *tokens_b,
            vocabulary.sep_id]
  num_to_predict = min(options.max_predictions_per_seq,
                       max(1, int(round(len(tokens) *
                                        options.masked_lm_prob))))
  if options.do_whole_word_mask:
    chosen = _choose_whole_words(tokens, num_to_predict, vocabulary, rng)
  else:
    chosen = _choose_pieces(len(tokens), len(tokens_a), num_to_predict, rng)
  labels = {index: tokens[index] for index in chosen}
  # 80% [MASK], 10% unchanged, 10% a random word: the original's draws.
  random_words = vocabulary.random_word_ids
  for index in chosen:
    if rng.random() < 0.8:
      tokens[index] = vocabulary.mask_id
    elif rng.random() >= 0.5:
      tokens[index] = random_words[randint(rng, 0, len(random_words) - 1)]
  positions = sorted(chosen)
  return TrainingInstance(
      input_ids=tokens,
      first_segment_length=len(tokens_a) + 2,
      masked_lm_positions=positions,
      masked_lm_ids=[labels[index] for index in positions],
      is_random_next=is_random_next)


def _choose_pieces(num_tokens, length_a, num_to_predict, rng):
  """Positions to mask, one word piece each, in the original's draw order.

  The candidates are every position but [CLS] and the two [SEP]s (text
  never tokenises to those); each is its own group, so the original's
  walk over the shuffled groups takes the first num_to_predict.
  """
  candidates = list(range(1, num_tokens - 1))
  del candidates[length_a]  # the middle [SEP]
  shuffle(candidates, rng)
  return candidates[:num_to_predict]


def _choose_whole_words(tokens, num_to_predict, vocabulary, rng):
  """Positions to mask, whole words at a time, in the original's order.

  A "##" piece joins the group before it; groups that would overshoot
  num_to_predict are skipped, as in create_masked_lm_predictions.
  """
  special = (vocabulary.cls_id, vocabulary.sep_id)
  groups = []
  for index, token in enumerate(tokens):
    if token in special:
      continue
    if groups and vocabulary.is_continuation[token]:
      groups[-1].append(index)
    else:
      groups.append([index])
  shuffle(groups, rng)
  chosen = []
  for group in groups:
    if len(chosen) >= num_to_predict:
      break
    if len(chosen) + len(group) <= num_to_predict:
      chosen.extend(group)
  return chosen


def randint(rng, low, high):
  """rng.randint(low, high): the same draws, without randint's and
  randrange's argument checks in Python (CPython's _randbelow: the bits of
  the range's size, drawn again while past it)."""
  size = high - low + 1
  bits = size.bit_length()
  draw = rng.getrandbits(bits)
  while draw >= size:
    draw = rng.getrandbits(bits)
  return low + draw


def shuffle(items, rng):
  """random.Random.shuffle, the same permutation and random calls, faster.

  CPython's shuffle swaps items[i] with items[j], j = _randbelow(i + 1),
  for i from the end down to 1, drawing getrandbits((i + 1).bit_length())
  until j <= i. This is that loop with the bit length held fixed over each
  run of i where it does not change (tests compare it with rng.shuffle).
  """
  getrandbits = rng.getrandbits
  top = len(items) - 1
  while top > 0:
    bits = (top + 1).bit_length()
    bottom = (1 << (bits - 1)) - 1  # the smallest i with this bit length
    for i in range(top, max(bottom, 1) - 1, -1):
      j = getrandbits(bits)
      while j > i:
        j = getrandbits(bits)
      items[i], items[j] = items[j], items[i]
    top = bottom - 1
