"""What masking for the masked-LM objective needs to know about vocab.txt,
as ids: create_pretraining_data's (pretraining.instances) and the
masked-LM preprocessor's (text.masking) alike."""

from bert_tf.wordpiece.rules import CLS_TOKEN, MASK_TOKEN, SEP_TOKEN


class MaskingVocabulary:
  """[CLS], [SEP] and [MASK]'s ids, the ids random replacements are drawn
  from, and which ids are "##" pieces.

  Args:
    vocab: {token: id} as tokenization.load_vocab returns it.
  """

  def __init__(self, vocab):
    self.cls_id = vocab[CLS_TOKEN]
    self.sep_id = vocab[SEP_TOKEN]
    self.mask_id = vocab[MASK_TOKEN]
    # The original draws random words from list(vocab.keys()) and converts
    # the word back to its id, which for a repeated token is its last line.
    self.random_word_ids = list(vocab.values())
    self.is_continuation = [False] * (max(self.random_word_ids) + 1)
    for token, index in vocab.items():
      if token.startswith("##"):
        self.is_continuation[index] = True
