"""The original BERT tokenizer module (tokenization.py): its API, with
identical output, over bert_tf.wordpiece (which imports no TensorFlow).

  >>> tokenizer = tokenization.FullTokenizer("vocab.txt", do_lower_case=True)
  >>> tokenizer.tokenize("UNwant\\u00E9d,running")
  ['un', '##want', '##ed', ',', 'runn', '##ing']
"""

from bert_tf.wordpiece.rules import (
    CJK_RANGES, MAX_INPUT_CHARS_PER_WORD, UNK_TOKEN, cleaned_char,
    code_point_ranges, convert_to_unicode, is_chinese_char, is_control,
    is_punctuation, is_whitespace, load_vocab, read_vocabulary, strip_accents)
from bert_tf.wordpiece.tokenizer import (
    BasicTokenizer, FullTokenizer, WordpieceTokenizer, convert_by_vocab,
    convert_ids_to_tokens, convert_tokens_to_ids, printable_text,
    validate_case_matches_checkpoint, whitespace_tokenize)

# The original module's private names, which third-party code and the
# original's own tokenization_test.py call.
_is_whitespace = is_whitespace
_is_control = is_control
_is_punctuation = is_punctuation

__all__ = [
    "BasicTokenizer", "CJK_RANGES", "FullTokenizer", "MAX_INPUT_CHARS_PER_WORD",
    "UNK_TOKEN", "WordpieceTokenizer", "cleaned_char",
    "code_point_ranges", "convert_by_vocab", "convert_ids_to_tokens",
    "convert_to_unicode", "convert_tokens_to_ids", "is_chinese_char",
    "is_control", "is_punctuation", "is_whitespace", "load_vocab",
    "printable_text", "read_vocabulary", "strip_accents",
    "validate_case_matches_checkpoint", "whitespace_tokenize"]
