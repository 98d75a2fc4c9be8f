"""BertTaggerPreprocessor: what BertTagger needs to take raw text and
(words, tags) examples."""

import keras
import numpy as np

from bert_tf.text import offsets
from bert_tf.text.ner import features, tagging
from bert_tf.text.packing import pack_inputs
from bert_tf.text.preprocessor import BertPreprocessor
from bert_tf.wordpiece.rules import CLS_TOKEN, SEP_TOKEN, UNK_TOKEN


@keras.saving.register_keras_serializable(package="bert_tf")
class BertTaggerPreprocessor(BertPreprocessor):
  """A BertPreprocessor (its arguments, vocabulary and rules) that tags as
  run_ner does: words split as the original's BasicTokenizer splits text
  (whitespace and punctuation, CJK characters alone), each word's pieces
  from WordPiece, each word tagged on its first piece.

  - features(sentences, label_ids): run_ner's training features of lists
    of words (text.ner.features, --nodocument_context);
  - tag(model, texts): serve_text's words, tags and entities
    (text.ner.tagging);
  - pipeline_sequences(texts) and pipeline_pieces(...): one sequence per
    text, cut to max_seq_length, and its pieces with character offsets,
    as transformers' token-classification pipeline takes a text
    (text.ner.pipeline).

  Called, it packs each text into one sequence as BertPreprocessor does.
  """

  def features(self, sentences, label_ids):
    """Training features of [sentences] lists of words and their label
    ids (features.convert_words)."""
    self._check_vocabulary()
    return features.convert_words(sentences, label_ids, self.tokenizer,
                                  self.max_seq_length)

  def tag(self, model, labels, texts):
    """tagging.tag_texts of [batch] texts (valid UTF-8)."""
    self._check_vocabulary()
    return tagging.tag_texts(model, self.tokenizer, self.max_seq_length,
                             labels, texts)

  def pipeline_sequences(self, texts):
    """(the encoder's inputs [batch, max_seq_length], and each text's
    pieces: ids, starts, ends [batch, (pieces)]) of [batch] texts, each
    one sequence of its first max_seq_length - 2 pieces."""
    self._check_vocabulary()
    tokenized = offsets.tokenize_words(self.tokenizer, texts,
                                       ends_over_dropped=False)
    vocab = self.tokenizer.vocab
    ids = tokenized.ids.merge_dims(1, 2)
    budget = self.max_seq_length - 2
    return (pack_inputs(ids, self.max_seq_length, vocab[CLS_TOKEN],
                        vocab[SEP_TOKEN]),
            {"ids": ids[:, :budget],
             "starts": tokenized.starts.merge_dims(1, 2)[:, :budget],
             "ends": tokenized.ends.merge_dims(1, 2)[:, :budget]})

  def pipeline_pieces(self, pieces):
    """[texts] lists of (token, start, end, is_unknown), as
    pipeline.entities takes them, of pipeline_sequences' pieces."""
    tokens = self._tokens()
    unknown = self.tokenizer.vocab[UNK_TOKEN]
    return [[(tokens[piece], start, end, piece == unknown)
             for piece, start, end in zip(ids, starts, ends)]
            for ids, starts, ends in zip(
                *(pieces[name].to_list()
                  for name in ("ids", "starts", "ends")))]

  def kept_whole(self, text):
    """The first of the tokens the tokenizer keeps whole (transformers'
    special tokens) that text holds, or None: tagging splits them as
    words."""
    return offsets.kept_whole_token(self.tokenizer, text)

  def _tokens(self):
    """The vocabulary's tokens by id."""
    tokens = np.empty(self.vocab_size, object)
    for token, index in self.tokenizer.vocab.items():
      tokens[index] = token
    return tokens

  def _check_vocabulary(self):
    if self.tokenizer.vocab_file is None:
      raise ValueError(f"{type(self).__name__} has no vocabulary: give "
                       "vocab_file, or load the layer from a .keras file")

