"""encode_batch: a small batch by the tokenizer's pure-Python encode_many,
a large one by a CompiledEncoder built for it, the same ids either way."""

from bert_tf import tokenization
from bert_tf.text import batch_encoding
from tests.support.keyword_task import VOCAB


def test_a_small_batch_stays_in_python_and_a_large_one_compiles(
    monkeypatch):
  tokenizer = tokenization.FullTokenizer(VOCAB)
  texts = ["UNwant\u00e9d,running", "hello lowest"] * 50
  expected = [tokenizer.encode(text) for text in texts]
  built = []

  class CountedEncoder(batch_encoding.CompiledEncoder):
    def __init__(self, tokenizer):
      super().__init__(tokenizer)
      built.append(tokenizer)

  monkeypatch.setattr(batch_encoding, "CompiledEncoder", CountedEncoder)
  assert batch_encoding.encode_batch(tokenizer, texts) == expected
  assert not built
  monkeypatch.setattr(batch_encoding, "_COMPILE_MIN_CHARS", 100)
  assert batch_encoding.encode_batch(tokenizer, texts) == expected
  assert len(built) == 1
