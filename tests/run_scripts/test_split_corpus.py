"""run_scripts/split_corpus.py and bert_tf.pretraining.corpus_shards: document-aligned
shards of one corpus, written together."""

import os

from bert_tf import tokenization
from bert_tf.data.tfrecords import RoundRobinWriter
from bert_tf.pretraining import corpus_shards, documents
from bert_tf.wordpiece.vocabulary import demo_vocab_file
from tests.support.helpers import assert_fails_in_one_line, run_script_cases

# Documents of 1 to 5 sentences. Some blank lines hold whitespace that the
# original strips ("\u3000", "\x1c", "\r").
CORPUS = b"".join(
    b"".join(f"Sentence {sentence} of document {document}.\n".encode()
             for sentence in range(1 + document % 5))
    + [b"\n", b"  \t\n", "\u3000\n".encode(), b"\x1c\n", b"\r\n"][
        document % 5]
    for document in range(60))


def test_shards_end_at_blank_lines_and_cover_the_file(tmp_path):
  path = tmp_path / "corpus.txt"
  path.write_bytes(CORPUS)
  ranges = corpus_shards.document_aligned_ranges(str(path), 200)
  assert ranges[0][0] == 0 and ranges[-1][1] == len(CORPUS)
  assert all(end == start for (_, end), (start, _) in zip(ranges, ranges[1:]))
  assert len(ranges) > 5
  for start, end in ranges[:-1]:
    assert end - start >= 200
    last_line = CORPUS[start:end].splitlines(keepends=True)[-1]
    assert not tokenization.convert_to_unicode(last_line).strip()


def test_each_shard_reads_as_its_documents_of_the_whole(tmp_path):
  path = tmp_path / "corpus.txt"
  path.write_bytes(CORPUS)
  ranges = corpus_shards.document_aligned_ranges(str(path), 300)
  paths = corpus_shards.shard_paths(str(path), str(tmp_path / "out"),
                                    len(ranges))
  corpus_shards.write_shards(str(path), ranges, paths)
  tokenizer = tokenization.FullTokenizer(demo_vocab_file())
  whole = documents.read_documents([str(path)], tokenizer, processes=1)
  pieces = [document for shard in paths
            for document in documents.read_documents([shard], tokenizer,
                                                     processes=1)]
  assert pieces == whole
  assert b"".join(open(shard, "rb").read() for shard in paths) == CORPUS


def test_a_document_longer_than_a_shard_is_not_cut(tmp_path):
  path = tmp_path / "corpus.txt"
  long_document = b"one long document\n" * 50 + b"\n"
  path.write_bytes(long_document + b"short\n\nshorter\n")
  ranges = corpus_shards.document_aligned_ranges(str(path), 100)
  assert ranges == [(0, len(long_document)),
                    (len(long_document), path.stat().st_size)]


def test_the_script_writes_named_shards_and_refuses_another_split(tmp_path):
  (tmp_path / "wiki.txt").write_bytes(CORPUS)
  (tmp_path / "a_file").write_text("not a directory")
  output_dir = tmp_path / "shards"

  def case(**values):
    return {"input_file": tmp_path / "wiki.txt", "output_dir": output_dir,
            **values}

  first, again, other, into_file, negative, infinite, nan = run_script_cases(
      "split_corpus.py", [
          case(shard_mb=0.0005), case(shard_mb=0.0005), case(shard_mb=0.001),
          case(output_dir=tmp_path / "a_file"), case(shard_mb=-1),
          case(shard_mb="inf", output_dir=tmp_path / "inf"),
          case(shard_mb="nan", output_dir=tmp_path / "nan")])
  assert first == (0, "") and again == (0, ""), (first, again)
  names = sorted(os.listdir(output_dir))
  assert names[0] == f"wiki-00000-of-{len(names):05d}.txt" and len(names) > 2
  assert b"".join((output_dir / name).read_bytes()
                  for name in names) == CORPUS
  assert_fails_in_one_line(other, "split_corpus",
                           "--output_dir=.*shards holds .*wiki-00000-of-"
                           f"{len(names):05d}.txt from another split")
  assert sorted(os.listdir(output_dir)) == names
  assert_fails_in_one_line(into_file, "split_corpus",
                           "--output_dir=.*a_file is a file, not a directory")
  assert_fails_in_one_line(negative, "split_corpus",
                           "--shard_mb=-1.0: must be positive")
  for outcome, value in ((infinite, "inf"), (nan, "nan")):
    assert_fails_in_one_line(outcome, "split_corpus",
                             f"--shard_mb={value}: must be a finite number")
    assert not (tmp_path / value).exists()


def test_a_tfrecord_or_a_file_not_utf8_is_refused_naming_it(tmp_path):
  """create_pretraining_data refuses both, so shards of them would only
  fail later."""
  with RoundRobinWriter([str(tmp_path / "records.tfrecord")]) as writer:
    writer.write(b"a record")
  (tmp_path / "latin1.txt").write_bytes(b"one\n\ncaf\xe9 au lait\n")
  results = run_script_cases("split_corpus.py", [
      {"input_file": tmp_path / name, "output_dir": tmp_path / "shards",
       "shard_mb": 1e-6} for name in ("records.tfrecord", "latin1.txt")])
  assert_fails_in_one_line(results[0], "split_corpus",
                           "--input_file: .*records.tfrecord is a TFRecord "
                           "file, not text")
  assert_fails_in_one_line(results[1], "split_corpus",
                           "latin1.txt:3: not UTF-8 text")
  assert not (tmp_path / "shards").exists()
