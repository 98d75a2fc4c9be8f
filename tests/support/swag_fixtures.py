"""swagaf-format files made by tests: a synthetic four-way task that a tiny
randomly initialised BERT learns in a few hundred steps."""

import csv
import random

from tests.support.squad_fixtures import THINGS

HEADER = ["", "video-id", "fold-ind", "startphrase", "sent1", "sent2",
          "gold-source", "ending0", "ending1", "ending2", "ending3", "label"]
NAMES = ("someone", "the man", "a woman", "the child")
# Four colours: each row's endings are all four.
COLOURS = ("red", "blue", "green", "black")


def write_swag(path, rows, labelled=True):
  """rows: [index, video-id, fold-ind, startphrase, sent1, sent2,
  gold-source, ending0..3, label], written as the swagaf files are (csv
  quoting where a field needs it)."""
  with open(path, "w", encoding="utf-8", newline="") as writer:
    output = csv.writer(writer)
    output.writerow(HEADER if labelled else HEADER[:-1])
    output.writerows(rows)


def synthetic_swag(path, seed, count, labelled=True):
  """Context "a <colour> <thing>", ending "<name>" + "<colour> <thing>":
  the right ending repeats the context's colour, the three others name the
  other colours (so only the context tells them apart). Every seventh
  context holds commas, quotes and a line break, as real rows do. Returns
  the labels."""
  rng = random.Random(seed)
  rows, labels = [], []
  for index in range(count):
    colour, thing = rng.choice(COLOURS), rng.choice(THINGS)
    name = rng.choice(NAMES)
    context = f"a {colour} {thing}"
    if index % 7 == 0:
      context = f'"a, {colour}"\n{thing}'
    endings = [f"{other} {thing}" for other in COLOURS if other != colour]
    label = rng.randrange(4)
    endings.insert(label, f"{colour} {thing}")
    labels.append(label)
    row = [str(index), f"video{index}", str(index % 3), f"{context} {name}",
           context, name, "gold", *endings]
    rows.append(row + [str(label)] if labelled else row)
  write_swag(path, rows, labelled)
  return labels
