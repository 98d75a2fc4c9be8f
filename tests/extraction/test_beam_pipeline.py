"""extract_features --beam_runner: each input file's output, exactly as the
single-process run writes it for that file, from an Apache Beam pipeline
(the DirectRunner here); a run's outputs appear together or not at all."""

import json
import logging
import os

import numpy as np
import pytest

import bert_tf
from bert_tf.extraction import extraction
from bert_tf.extraction.extraction import ExtractionOptions
from bert_tf.training import distribution
from tests.support.helpers import assert_fails_in_one_line, run_script_cases
from tests.support.sentence_transformers_folders import folder

pytestmark = pytest.mark.beam

FOLDER = folder("today_mean")
# Files of different sizes: unicode, an empty line, a long line (cut at the
# folder's max length), a file of blank lines only.
TEXTS = {
    "one.txt": "A single line.\n",
    "unicode.txt": "Ünïcödé, naïve café.\n\n日本語のテキスト\n"
                   + "A long line of many words " * 30 + "\nLast\n",
    "blank.txt": "\n   \n\n",
}
SCRIPT = "extract_features.py"


def _write_texts(directory, texts):
  directory.mkdir()
  for name, text in texts.items():
    (directory / name).write_text(text, "utf-8")
  return directory


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
  """One Beam run of three files on two worker processes, and the command
  lines refused before any work, in one process."""
  tmp_path = tmp_path_factory.mktemp("beam")
  corpus = _write_texts(tmp_path / "corpus", TEXTS)
  twins = _write_texts(tmp_path / "twins", {"one.txt": "Again.\n"})
  flags = {"init_checkpoint": FOLDER, "input_file": corpus / "*.txt",
           "beam_runner": "DirectRunner", "output_format": "npz"}
  refused = {
      "--output_dir=.*one.txt is a file, not a directory":
          {"output_dir": corpus / "one.txt"},
      f"{twins / 'one.txt'} and {corpus / 'one.txt'} would both write .*"
      "one.txt.npz; give input files distinct names":
          {"input_file": f"{corpus}/*.txt,{twins}/*.txt"},
      "--input_file: .*nothing-\\*.txt matches no file":
          {"input_file": corpus / "nothing-*.txt"},
      "--input_file: .*corpus is a directory, not a file":
          {"input_file": corpus},
      "--num_workers=-1: must be 0 or more": {"num_workers": -1},
      "--output_file: a Beam run writes one output per input file into "
      "--output_dir": {"output_file": tmp_path / "x.npz"},
      "--beam_runner needs --output_dir": {"output_dir": None},
      "--output_dir is only for --beam_runner": {"beam_runner": None},
  }
  cases = [{**flags, "output_dir": tmp_path / "out", "num_workers": 2}] + [
      {name: value for name, value in {
          **flags, "output_dir": tmp_path / "refused", **case}.items()
       if value is not None} for case in refused.values()]
  outcomes = run_script_cases(SCRIPT, cases)
  assert outcomes[0][0] == 0, outcomes[0][1][-3000:]
  return tmp_path, dict(zip(refused, outcomes[1:]))


def _single_process(input_file, output_file, **options):
  """What extract_features writes for input_file alone."""
  return extraction.extract_features(ExtractionOptions(
      input_file=str(input_file), output_file=str(output_file),
      init_checkpoint=FOLDER, **options),
                                     distribution.create_strategy())


def test_each_file_gives_the_single_process_bytes_and_encode(runs):
  tmp_path, _ = runs
  outputs = tmp_path / "out"
  assert sorted(os.listdir(outputs)) == sorted(f"{name}.npz"
                                               for name in TEXTS)
  model = bert_tf.load_pretrained(FOLDER).model
  for name, text in TEXTS.items():
    alone = tmp_path / f"{name}.alone.npz"
    _single_process(tmp_path / "corpus" / name, alone, output_format="npz")
    assert (outputs / f"{name}.npz").read_bytes() == alone.read_bytes()
    embeddings = np.load(outputs / f"{name}.npz")["embeddings"]
    lines = [line.strip() for line in text.split("\n")[:-1]]
    assert len(embeddings) == len(lines)  # each line once, in order
    np.testing.assert_allclose(embeddings, model.encode(lines), atol=1e-5)


@pytest.mark.parametrize("index", range(8))
def test_bad_flags_and_paths_fail_in_one_line_before_any_work(runs, index):
  tmp_path, refused = runs
  expected, outcome = list(refused.items())[index]
  assert_fails_in_one_line(outcome, SCRIPT, expected)
  assert not (tmp_path / "refused").exists()
  assert not (tmp_path / "x.npz").exists()


def _beam_run(input_file, output_dir, **options):
  """extract_with_beam in this process (Beam's in-memory runner)."""
  from bert_tf.extraction import beam_pipeline  # pylint: disable=g-import-not-at-top
  from bert_tf.runs import beam_runs  # pylint: disable=g-import-not-at-top
  return beam_pipeline.extract_with_beam(
      ExtractionOptions(input_file=str(input_file), output_file=None,
                        init_checkpoint=FOLDER, **options),
      str(output_dir), beam_runs.pipeline_options("DirectRunner", []))


def test_one_shard_of_per_token_layers_is_the_single_process_jsonl(
    tmp_path, caplog):
  corpus = _write_texts(tmp_path / "corpus", {"one.txt": TEXTS["unicode.txt"]})
  with caplog.at_level(logging.INFO):
    files, lines, _ = _beam_run(corpus / "one.txt", tmp_path / "out",
                                layers="-1,0", max_seq_length=32)
  assert (files, lines) == (1, 5)  # from the run's counters
  assert f"{corpus / 'one.txt'}: 5 lines in " in caplog.text
  _single_process(corpus / "one.txt", tmp_path / "alone.jsonl",
                  layers="-1,0", max_seq_length=32)
  ours = (tmp_path / "out" / "one.txt.jsonl").read_bytes()
  assert ours == (tmp_path / "alone.jsonl").read_bytes()
  assert [json.loads(line)["linex_index"] for line in ours.splitlines()] \
      == list(range(5))


def test_a_file_not_utf8_is_named_and_no_output_is_written(tmp_path):
  corpus = _write_texts(tmp_path / "corpus", {"good.txt": "Fine.\n"})
  (corpus / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
  (tmp_path / "out").mkdir()
  (tmp_path / "out" / "good.txt.npz").write_bytes(b"an earlier run's")
  with pytest.raises(ValueError, match=r"--input_file.*latin1.txt.*UTF-8.*"
                     r"; no shard of this run was written"):
    _beam_run(corpus / "*.txt", tmp_path / "out", output_format="npz")
  assert os.listdir(tmp_path / "out") == ["good.txt.npz"]
  assert (tmp_path / "out" / "good.txt.npz").read_bytes() == \
      b"an earlier run's"


def test_a_run_killed_mid_file_leaves_no_partial_output(tmp_path,
                                                        monkeypatch):
  corpus = _write_texts(tmp_path / "corpus", {
      "a.txt": "First.\n", "b.txt": "Second.\n"})
  written = extraction.FileExtractor.write

  def write_then_die(self, examples, output_file):
    if examples[0].text_a == "Second.":
      with open(output_file, "w", encoding="utf-8") as partial:
        partial.write("{\"linex_index\": 0")
      raise RuntimeError("killed mid-file")
    written(self, examples, output_file)

  monkeypatch.setattr(extraction.FileExtractor, "write", write_then_die)
  with pytest.raises(Exception, match="killed mid-file"):
    _beam_run(corpus / "*.txt", tmp_path / "out")
  assert os.listdir(tmp_path / "out") == []
