import collections
import os
import random
import subprocess
import sys

import pytest

from bert_tf import tokenization
from bert_tf.data.tfrecords import RoundRobinWriter
from bert_tf.wordpiece import learning, vocabulary
from tests.support.helpers import (PROJECT_DIR, assert_fails_in_one_line,
                                   run_script_cases)

SCRIPT = os.path.join(PROJECT_DIR, "run_scripts", "build_vocab.py")
VOCAB_SIZE = 300
NUM_UNUSED = 10
MIN_COUNT = 2


def write_corpus(path):
  """Documents of sentences over made-up words with Zipf-like frequencies,
  capitalised sentence starts, accents and punctuation."""
  rng = random.Random(0)
  syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "zen", "qua",
               "bri", "dor", "fé", "ün"]
  words = sorted({"".join(rng.choice(syllables)
                          for _ in range(rng.randint(1, 4)))
                  for _ in range(400)})
  weights = [1 / (rank + 1) for rank in range(len(words))]
  rng.shuffle(words)
  documents = []
  for _ in range(40):
    sentences = []
    for _ in range(rng.randint(5, 20)):
      sentence = rng.choices(words, weights, k=rng.randint(4, 12))
      sentence[0] = sentence[0].capitalize()
      sentences.append(" ".join(sentence).replace(" ", ", ", 1) + ".")
    documents.append("\n".join(sentences))
  with open(path, "w", encoding="utf-8") as writer:
    writer.write("\n\n".join(documents) + "\n")


def build_command(input_file, output_file):
  return [sys.executable, SCRIPT, f"--input_file={input_file}",
          f"--output_file={output_file}", f"--vocab_size={VOCAB_SIZE}",
          f"--num_unused={NUM_UNUSED}", f"--min_count={MIN_COUNT}"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
  """The corpus and two vocabularies built from it at once, under different
  hash seeds."""
  directory = tmp_path_factory.mktemp("build_vocab")
  corpus = str(directory / "corpus.txt")
  write_corpus(corpus)
  outputs = [str(directory / f"vocab{run}.txt") for run in range(2)]
  processes = [
      subprocess.Popen(build_command(corpus, output),
                       env={**os.environ, "PYTHONHASHSEED": str(seed)},
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
      for seed, output in enumerate(outputs)]
  for process in processes:
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr
  return corpus, outputs


def test_vocab_is_in_the_release_layout_and_near_the_size(built):
  _, (output, _) = built
  tokens = list(tokenization.load_vocab(output))
  with open(output, encoding="utf-8") as reader:
    assert len(reader.read().splitlines()) == len(tokens)  # no repeats
  assert tokens[:NUM_UNUSED + 5] == learning.release_layout([], NUM_UNUSED)
  assert 0.95 * VOCAB_SIZE <= len(tokens) <= VOCAB_SIZE
  assert vocabulary.vocab_is_lower_cased(output)


def test_same_input_and_flags_give_the_same_file(built):
  _, (first, second) = built
  with open(first, "rb") as a, open(second, "rb") as b:
    assert a.read() == b.read()


def test_common_words_tokenize_without_unk(built):
  corpus, (output, _) = built
  tokenizer = tokenization.FullTokenizer(output, do_lower_case=True)
  with open(corpus, encoding="utf-8") as reader:
    counts = collections.Counter(
        tokenizer.basic_tokenizer.tokenize(reader.read()))
  common = [word for word, count in counts.items() if count >= MIN_COUNT]
  assert len(common) > 100
  for word in common:
    assert "[UNK]" not in tokenizer.tokenize(word), word
  # The most frequent words are learned whole.
  for word, _ in counts.most_common(20):
    assert tokenizer.tokenize(word) == [word]


# Refused before any work, in one line: Python's checks, the same on every
# TensorFlow; one leg of CI runs it.
@pytest.mark.parametrize("contents", [None, "\n\n  \n"],
                         ids=["missing", "empty"])
@pytest.mark.rerun
def test_bad_input_fails_naming_the_file_and_writes_nothing(tmp_path,
                                                            contents):
  corpus = tmp_path / "corpus.txt"
  if contents is not None:
    corpus.write_text(contents, encoding="utf-8")
  output = tmp_path / "vocab.txt"
  result = subprocess.run(build_command(corpus, output), capture_output=True,
                          text=True, timeout=300, check=False)
  assert result.returncode != 0
  assert str(corpus) in result.stderr
  assert not output.exists()


# Refused before any work, in one line: Python's checks, the same on every
# TensorFlow; one leg of CI runs it.
@pytest.mark.rerun
def test_bad_flags_and_paths_fail_in_one_line(tmp_path):
  corpus = tmp_path / "corpus.txt"
  write_corpus(corpus)
  before = corpus.read_bytes()
  records = tmp_path / "data.tfrecord"
  with RoundRobinWriter([str(records)]) as writer:
    writer.write(b"a record")
  os.mkfifo(tmp_path / "fifo")
  base = {"input_file": corpus, "output_file": tmp_path / "vocab.txt"}
  cases = {
      "--output_file=.*corpus.txt is the same file as --input_file":
          {"output_file": corpus},
      "--output_file=.*fifo is a FIFO": {"output_file": tmp_path / "fifo"},
      "--input_file: .*data.tfrecord is a TFRecord file, not text":
          {"input_file": records},
      "--vocab_size=50: must leave room for characters after the 104 "
      "special tokens": {"vocab_size": 50},
      "--min_count=0: must be at least 1": {"min_count": 0},
      "--slack_ratio=1.5: must be in": {"slack_ratio": 1.5},
      # each named alone, not in one message for both
      "^build_vocab: --num_unused=-1: must be 0 or more$":
          {"num_unused": -1},
      "^build_vocab: --max_lines=0: must be at least 1$": {"max_lines": 0},
  }
  results = run_script_cases("build_vocab.py", [
      {**base, **overrides} for overrides in cases.values()])
  for message, result in zip(cases, results):
    assert_fails_in_one_line(result, "build_vocab", message)
  assert corpus.read_bytes() == before
  assert sorted(os.listdir(tmp_path)) == ["corpus.txt", "data.tfrecord",
                                          "fifo"]
