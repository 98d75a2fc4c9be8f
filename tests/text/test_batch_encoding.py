"""encode_batch: a small batch by the tokenizer's pure-Python encode_many,
a large one by the compiled path (built once per tokenizer), the same ids
either way."""

from bert_tf import tokenization
from bert_tf.text import batch_encoding
from tests.support.keyword_task import VOCAB


def test_a_small_batch_stays_in_python_and_a_large_one_compiles(
    monkeypatch):
  tokenizer = tokenization.FullTokenizer(VOCAB)
  texts = ["UNwant\u00e9d,running", "hello lowest"] * 50
  expected = [tokenizer.encode(text) for text in texts]
  assert batch_encoding.encode_batch(tokenizer, texts) == expected
  assert tokenizer not in batch_encoding._COMPILED
  monkeypatch.setattr(batch_encoding, "_COMPILE_MIN_CHARS", 100)
  assert batch_encoding.encode_batch(tokenizer, texts) == expected
  assert tokenizer in batch_encoding._COMPILED
