"""SQuAD-format files made by tests: a synthetic extractive task that a tiny
randomly initialised BERT learns in a few steps."""

import json
import os
import random

from tests.support.helpers import PROJECT_DIR

DEMO_VOCAB = os.path.join(PROJECT_DIR, "vocab", "demo_uncased_vocab.txt")
COLOURS = ("red", "blue", "green", "black", "white", "yellow")
THINGS = ("car", "house", "book", "tree", "door", "ship")


def _filler_words():
  with open(DEMO_VOCAB, encoding="utf-8") as reader:
    words = [line.strip() for line in reader]
  return [word for word in words if word.isalpha() and len(word) > 2
          and word not in COLOURS + THINGS][:400]


def synthetic_squad(path, seed, num_paragraphs, questions_per_paragraph=3,
                    unanswerable=1 / 3):
  """Writes a SQuAD v2.0 file; returns its questions' gold answers.

  Each context is filler words with, for an answerable question, one
  "<Colour> <thing>" somewhere (capitalised at times, punctuation after at
  times, so that answers go through get_final_text); the question asks for
  it; about `unanswerable` of the contexts hold none (is_impossible).
  """
  rng = random.Random(seed)
  filler = _filler_words()
  articles, answers = [], {}
  for paragraph_number in range(num_paragraphs):
    words = rng.sample(filler, rng.randint(10, 24))
    answer = None
    if rng.random() >= unanswerable:
      colour = rng.choice(COLOURS)
      answer = f"{colour.capitalize() if rng.random() < 0.3 else colour} " \
          f"{rng.choice(THINGS)}"
      words.insert(rng.randrange(len(words) + 1),
                   answer + rng.choice(("", "", ".", ",")))
    context = " ".join(words)
    qas = []
    for number in range(questions_per_paragraph):
      qas_id = f"q{paragraph_number}-{number}"
      question = rng.choice(("what coloured thing is there ?",
                             "which thing has a colour ?"))
      entry = {"id": qas_id, "question": question,
               "is_impossible": answer is None, "answers": []}
      if answer is not None:
        entry["answers"] = [{"text": answer,
                             "answer_start": context.index(answer)}]
      qas.append(entry)
      answers[qas_id] = answer or ""
    articles.append({"title": f"article {paragraph_number}",
                     "paragraphs": [{"context": context, "qas": qas}]})
  with open(path, "w", encoding="utf-8") as writer:
    json.dump({"version": "v2.0", "data": articles}, writer)
  return answers
