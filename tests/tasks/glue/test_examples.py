"""GLUE and XNLI readers, on the real GLUE files and on fixtures in the
formats of the files too large to carry (MNLI, QQP, XNLI)."""

import os

import pytest

from bert_tf.tasks.glue import examples as glue
from tests.support.helpers import SHARED_DIR

GLUE_DIR = os.path.join(SHARED_DIR, "data", "glue")


def read(task_name, directory, split):
  return glue.read_examples(glue.get_task(task_name), str(directory), split)


@pytest.mark.shared
@pytest.mark.parametrize("task_name, directory, split, count, first", [
    ("cola", "CoLA", "dev", 1043, ("dev-0", None, "1")),
    ("cola", "CoLA", "test", 1063, ("test-1", None, None)),
    ("sst-2", "SST-2", "train", 67349, ("train-1", None, "0")),
    ("mrpc", "MRPC", "train", 3668, ("train-1", True, "1")),
    ("mrpc", "MRPC", "test", 1725, ("test-1", True, None)),
    ("sts-b", "STS-B", "dev", 1500, ("dev-1", True, 5.0)),
    ("qnli", "QNLI", "dev", 5463, ("dev-1", True, "entailment")),
    ("rte", "RTE", "train", 2490, ("train-1", True, "not_entailment")),
    ("wnli", "WNLI", "dev", 71, ("dev-1", True, "0")),
])
def test_real_glue_files(task_name, directory, split, count, first):
  examples = read(task_name, os.path.join(GLUE_DIR, directory), split)
  assert len(examples) == count
  guid, has_b, label = first
  assert examples[0].guid == guid
  assert (examples[0].text_b is not None) == bool(has_b)
  assert examples[0].label == label
  assert all(example.text_a for example in examples)


@pytest.mark.shared
def test_mrpc_byte_order_mark_and_test_index():
  examples = read("mrpc", os.path.join(GLUE_DIR, "MRPC"), "test")
  assert examples[0].index == "0"
  assert examples[0].text_a.startswith("PCCW's chief operating officer")
  assert examples[-1].index == "1724"


@pytest.mark.shared
def test_cola_dev_has_no_header_and_quotes_are_text():
  examples = read("cola", os.path.join(GLUE_DIR, "CoLA"), "dev")
  assert examples[0].text_a == ("The sailors rode the breeze clear of the "
                                "rocks.")
  texts = [example.text_a for example in
           read("mrpc", os.path.join(GLUE_DIR, "MRPC"), "train")]
  assert any(text.count('"') == 1 for text in texts)  # an unpaired quote


def write(path, lines):
  path.parent.mkdir(parents=True, exist_ok=True)
  path.write_text("".join("\t".join(row) + "\n" for row in lines),
                  encoding="utf-8")


MNLI_HEADER = ["index", "promptID", "pairID", "genre",
               "sentence1_binary_parse", "sentence2_binary_parse",
               "sentence1_parse", "sentence2_parse", "sentence1", "sentence2"]


def mnli_row(index, a, b, *labels):
  return [str(index), "1", "1a", "fiction", "(x)", "(y)", "(X)", "(Y)", a, b,
          *labels]


def test_mnli_matched_and_mismatched(tmp_path):
  write(tmp_path / "train.tsv", [MNLI_HEADER + ["label1", "gold_label"],
                                 mnli_row(0, "a", "b", "neutral", "neutral")])
  dev_header = MNLI_HEADER + [f"label{i}" for i in range(1, 6)] + [
      "gold_label"]
  write(tmp_path / "dev_matched.tsv", [dev_header, mnli_row(
      0, "m", "n", "neutral", "entailment", "x", "y", "z", "entailment")])
  write(tmp_path / "dev_mismatched.tsv", [dev_header, mnli_row(
      0, "p", "q", "neutral", "x", "y", "z", "w", "contradiction")])
  write(tmp_path / "test_matched.tsv", [MNLI_HEADER, mnli_row(7, "t", "u")])
  write(tmp_path / "test_mismatched.tsv", [MNLI_HEADER, mnli_row(9, "v",
                                                                 "w")])
  task = glue.get_task("MNLI")
  assert task.dev_splits == ["dev", "dev_mismatched"]
  assert task.test_splits == ["test", "test_mismatched"]
  assert read("mnli", tmp_path, "train")[0].label == "neutral"
  assert read("mnli", tmp_path, "dev")[0].label == "entailment"
  mismatched = read("mnli", tmp_path, "dev_mismatched")[0]
  assert (mismatched.text_a, mismatched.label) == ("p", "contradiction")
  test = read("mnli", tmp_path, "test_mismatched")[0]
  assert (test.text_a, test.text_b, test.index) == ("v", "w", "9")
  assert task.submission_files == {"test": "MNLI-m.tsv",
                                   "test_mismatched": "MNLI-mm.tsv"}


def test_qqp(tmp_path):
  write(tmp_path / "train.tsv", [
      ["id", "qid1", "qid2", "question1", "question2", "is_duplicate"],
      ["5", "11", "12", "How?", "Why?", "1"]])
  write(tmp_path / "test.tsv", [["id", "question1", "question2"],
                                ["3", "Who?", "When?"]])
  example = read("qqp", tmp_path, "train")[0]
  assert (example.text_a, example.text_b, example.label) == ("How?", "Why?",
                                                             "1")
  test = read("qqp", tmp_path, "test")[0]
  assert (test.text_a, test.text_b, test.index) == ("Who?", "When?", "3")


def test_xnli_as_the_original(tmp_path):
  write(tmp_path / "multinli" / "multinli.train.zh.tsv", [
      ["premise", "hypo", "label"], ["前提", "假设", "contradictory"]])
  dev_row = lambda language, a, label: [language, label, "x", "y", "z", "w",
                                        a, "b"]
  write(tmp_path / "xnli.dev.tsv", [
      ["language", "gold_label"] + ["c"] * 6,
      dev_row("en", "english", "neutral"),
      dev_row("zh", "中文", "entailment")])
  task = glue.get_task("XNLI")
  train = glue.read_examples(task, str(tmp_path), "train")
  assert train[0].label == "contradiction"  # the original's alias
  dev = glue.read_examples(task, str(tmp_path), "dev", language="zh")
  assert [(example.text_a, example.label) for example in dev] == [
      ("中文", "entailment")]
  assert glue.read_examples(task, str(tmp_path), "dev",
                            language="en")[0].text_a == "english"


@pytest.mark.parametrize("lines, message", [
    ([["sentence", "label"], ["good film", "1"], ["no label"]],
     "train.tsv:3: expected at least 2 tab-separated columns, found 1"),
    ([["sentence", "label"], ["good film", "positive"]],
     "train.tsv:2: label 'positive' is not one of ['0', '1']"),
    ([["sentence", "label"]], "train.tsv: no examples"),
])
def test_bad_rows_name_the_file_and_line(tmp_path, lines, message):
  write(tmp_path / "train.tsv", lines)
  with pytest.raises(ValueError, match=message.replace("[", r"\[")
                     .replace("]", r"\]")):
    read("sst-2", tmp_path, "train")


def test_missing_file_and_unknown_task(tmp_path):
  with pytest.raises(ValueError, match="dev.tsv: no such file"):
    read("rte", tmp_path, "dev")
  with pytest.raises(ValueError, match="--task_name=glue: unknown task"):
    glue.get_task("glue")


def test_sts_b_score_must_be_a_number(tmp_path):
  header = ["index", "genre", "filename", "year", "old_index", "source1",
            "source2", "sentence1", "sentence2", "score"]
  write(tmp_path / "dev.tsv", [header, ["0", "g", "f", "y", "o", "s", "s",
                                        "a", "b", "high"]])
  with pytest.raises(ValueError, match="dev.tsv:2: label 'high' is not a "
                                       "number"):
    read("sts-b", tmp_path, "dev")


def test_a_field_over_128_kb_is_read(tmp_path):
  """csv's default field limit is 128 KB; a long text is still a text."""
  long_text = "word " * 40000
  write(tmp_path / "train.tsv", [["sentence", "label"], [long_text, "1"]])
  assert read("sst-2", tmp_path, "train")[0].text_a == long_text


def test_text_that_is_not_utf8_names_the_line(tmp_path):
  (tmp_path / "train.tsv").write_bytes(
      b"sentence\tlabel\n" + b"good film\t1\n" * 800 + b"caf\xe9\t1\n")
  with pytest.raises(ValueError, match="train.tsv:802: not UTF-8 text"):
    read("sst-2", tmp_path, "train")
