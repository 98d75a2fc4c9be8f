"""CoNLL-2003-format files made by tests: a synthetic NER corpus that a tiny
randomly initialised BERT learns in a few hundred steps."""

import random

from tests.support.squad_fixtures import DEMO_VOCAB

# Names of several word pieces each in the demo vocabulary; a type's first
# pieces are its own (a tiny model learns that in CI time), and first names'
# differ from last names', so that two adjacent people can be told apart.
FIRST_NAMES = ("Melanie", "Jasper", "Archibald")
LAST_NAMES = ("Kesteven", "Pemberton", "Wickersham", "Ravensholm")
PLACES = ("Ottoburg", "Zandipur", "Harrowgate", "Velmora", "Yarrowby")
ORGANISATIONS = (("Fenwick", "Holdings"), ("Tarrow", "Union"),
                 ("Galloway", "Guild"), ("Finchley", "Trustees"))
MISC = ("Elvish", "Dravidic", "Nordic", "Calvenese", "Ionian")

def _filler_words():
  with open(DEMO_VOCAB, encoding="utf-8") as reader:
    words = [line.strip() for line in reader]
  return [word for word in words if word.isalpha() and len(word) > 2][:300]


def _entities(rng):
  """One or two adjacent entities of one type: (type, [words]) each."""
  kind = rng.choice(("PER", "LOC", "ORG", "MISC"))
  count = 2 if rng.random() < 0.25 else 1
  if kind == "PER":
    make = lambda: [rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)][
        rng.random() < 0.2:]
  elif kind == "LOC":
    make = lambda: [rng.choice(PLACES)]
  elif kind == "ORG":
    make = lambda: list(rng.choice(ORGANISATIONS))
  else:
    make = lambda: [rng.choice(MISC)]
  return [(kind, make()) for _ in range(count)]


def iob1_tags(pieces):
  """IOB1 tags of [(type or None, [words])]: I- everywhere in an entity,
  B- on the first word of one that follows another of its type."""
  tags, previous = [], None
  for kind, words in pieces:
    if kind is None:
      tags += ["O"] * len(words)
    else:
      first = "B" if previous == kind else "I"
      tags += [f"{first}-{kind}"] + [f"I-{kind}"] * (len(words) - 1)
    previous = kind
  return tags


def synthetic_conll(path, seed, num_documents):
  """Writes a CoNLL-2003 file of num_documents documents of 2-5 sentences;
  each sentence is filler words around one to three entity groups."""
  rng = random.Random(seed)
  filler = _filler_words()
  lines = []
  for _ in range(num_documents):
    lines += ["-DOCSTART- -X- -X- O", ""]
    for _ in range(rng.randint(2, 5)):
      pieces = [(None, rng.sample(filler, rng.randint(1, 4)))]
      for _ in range(rng.randint(1, 3)):
        for entity in _entities(rng):
          pieces.append(entity)
        pieces.append((None, rng.sample(filler, rng.randint(1, 4))))
      words = [word for _, group in pieces for word in group]
      lines += [f"{word} NN I-NP {tag}"
                for word, tag in zip(words, iob1_tags(pieces))] + [""]
  with open(path, "w", encoding="utf-8") as writer:
    writer.write("\n".join(lines) + "\n")
