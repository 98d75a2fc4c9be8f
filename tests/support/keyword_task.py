"""A small text task a tiny BERT learns in seconds: sentences of filler words
from the demo vocabulary with one keyword that decides the label."""

import os

from tests.support.helpers import PROJECT_DIR

VOCAB = os.path.join(PROJECT_DIR, "vocab", "demo_uncased_vocab.txt")
POSITIVE = ["return", "this", "with", "that", "object"]
NEGATIVE = ["string", "file", "from", "will", "default"]


def filler_words():
  with open(VOCAB, encoding="utf-8") as reader:
    words = [line.strip() for line in reader]
  return [word for word in words if word.isalpha() and len(word) > 3
          and word not in POSITIVE + NEGATIVE][:300]


def keyword_sentences(rng, count):
  """(sentence, label "0" or "1") pairs drawn with the random.Random rng."""
  filler = filler_words()
  for _ in range(count):
    label = rng.randrange(2)
    words = rng.sample(filler, rng.randint(3, 10))
    words.insert(rng.randrange(len(words) + 1),
                 rng.choice(POSITIVE if label else NEGATIVE))
    yield " ".join(words), str(label)
