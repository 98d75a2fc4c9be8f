"""transformers' token-classification pipeline's entities, from a text's
word pieces, their character offsets and the model's probabilities: what
pipeline("token-classification", aggregation_strategy=...) answers for a
BertForTokenClassification folder, one sequence per text (truncated to
max_seq_length, as the pipeline truncates without stride).

Pieces form words as the pipeline tells them apart: a piece continues the
word before where its text is not as long as the span it came from (a
"##" piece; or a first piece whose span holds characters normalisation
dropped), never an [UNK]. Entities are grouped as the pipeline groups
them: adjacent words (or pieces) of one type, a B- starting a new one.
"""

import numpy as np

# aggregation_strategy values: "none" gives each piece, "simple" groups
# pieces, the others group words, each tagged by its first piece
# ("first"), its most probable piece ("max") or its pieces' mean
# probabilities ("average").
STRATEGIES = ("none", "simple", "first", "average", "max")
_WORD_STRATEGIES = ("first", "average", "max")

# What transformers' WordPiece decoder cleans up after joining pieces.
_CLEANUPS = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","),
             (" ' ", "'"), (" n't", "n't"), (" 'm", "'m"),
             (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"),
             (" 're", "'re"))


def check_strategy(strategy, where):
  """Raises ValueError unless strategy is one of STRATEGIES (any case, as
  the pipeline takes it); returns it lower-cased."""
  name = strategy.lower() if isinstance(strategy, str) else None
  if name not in STRATEGIES:
    raise ValueError(f"{where}: aggregation_strategy={strategy!r}; expected "
                     f"one of {', '.join(map(repr, STRATEGIES))}")
  return name


def pieces_to_string(tokens):
  """Pieces joined as transformers' WordPiece decoder joins them."""
  parts = []
  for index, token in enumerate(tokens):
    if index and token.startswith("##"):
      token = token[2:]
    elif index:
      token = " " + token
    for dirty, clean in _CLEANUPS:
      token = token.replace(dirty, clean)
    parts.append(token)
  return "".join(parts)


def entities(text, pieces, probabilities, labels, strategy,
             ignore_labels=("O",)):
  """The pipeline's answer for one text.

  Args:
    text: the text as sent.
    pieces: [(token, start, end, is_unknown)] of the text's pieces in the
      sequence, character offsets into text.
    probabilities: [pieces, labels] the model's, piece by piece.
    labels: the labels' names.
    strategy: one of STRATEGIES.
    ignore_labels: the labels (entity types, for groups) left out.

  Returns:
    [{entity, score, index, word, start, end}] for "none" (index: the
    piece's position in the sequence, [CLS] 0), else [{entity_group,
    score, word, start, end}].
  """
  tagged = []
  for index, ((token, start, end, unknown), scores) in enumerate(
      zip(pieces, probabilities)):
    tagged.append({"word": text[start:end] if unknown else token,
                   "scores": scores, "start": start, "end": end,
                   "index": index + 1,
                   "is_subword": not unknown and len(token) != end - start})
  if strategy in _WORD_STRATEGIES:
    found = [_word_entity(group, strategy, labels)
             for group in _word_groups(tagged)]
  else:
    found = [_piece_entity(piece, labels) for piece in tagged]
  if strategy == "none":
    return [entity for entity in found
            if entity["entity"] not in ignore_labels]
  return [group for group in _groups(found)
          if group["entity_group"] not in ignore_labels]


def _piece_entity(piece, labels):
  best = int(np.argmax(piece["scores"]))
  return {"entity": labels[best], "score": float(piece["scores"][best]),
          "index": piece["index"], "word": piece["word"],
          "start": piece["start"], "end": piece["end"]}


def _word_groups(pieces):
  """The pieces by word: a subword piece joins the word before."""
  words = []
  for piece in pieces:
    if words and piece["is_subword"]:
      words[-1].append(piece)
    else:
      words.append([piece])
  return words


def _word_entity(pieces, strategy, labels):
  """A word's entity: its first piece's, its most probable piece's, or
  that of its pieces' mean probabilities."""
  if strategy == "first":
    scores = pieces[0]["scores"]
  elif strategy == "max":
    scores = max(pieces, key=lambda piece: piece["scores"].max())["scores"]
  else:
    scores = np.nanmean(np.stack([piece["scores"] for piece in pieces]),
                        axis=0)
  best = int(np.argmax(scores))
  return {"entity": labels[best], "score": float(scores[best]),
          "word": pieces_to_string([piece["word"] for piece in pieces]),
          "start": pieces[0]["start"], "end": pieces[-1]["end"]}


def _split_tag(label):
  """(B or I, type): a label without a B- or I- prefix continues."""
  if label[:2] in ("B-", "I-"):
    return label[0], label[2:]
  return "I", label


def _groups(found):
  """Adjacent entities of one type, a B- starting a new group."""
  groups = []
  for entity in found:
    prefix, kind = _split_tag(entity["entity"])
    if groups and prefix != "B" and kind == _split_tag(
        groups[-1][-1]["entity"])[1]:
      groups[-1].append(entity)
    else:
      groups.append([entity])
  return [{"entity_group": group[0]["entity"].split("-", 1)[-1],
           "score": float(np.nanmean([entity["score"] for entity in group])),
           "word": pieces_to_string([entity["word"] for entity in group]),
           "start": group[0]["start"], "end": group[-1]["end"]}
          for group in groups]
