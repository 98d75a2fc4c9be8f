"""The docs' Keras examples run as written: every ```python block after a
`<!-- runs in tests/test_docs_examples.py -->` line in README.md and the
DOCS pages, in order, in one namespace per file, on tiny model directories
(model_dir, squad_dir, ner_dir) and a few sentences."""

import os
import re

import numpy as np
import pytest

from tests.support.helpers import PROJECT_DIR, SHARED_DIR

MARKER = "<!-- runs in tests/test_docs_examples.py -->"
DOCS = ["README.md", "docs/keras.md", "docs/serving.md", "docs/swag.md",
        "docs/squad.md", "docs/ner.md", "docs/embeddings.md"]
SENTENCES = ["the quick brown fox jumps over the lazy dog", "where does it end",
             "it was released by google", "bert reads text at once"] * 2


def examples(path):
  """The marked blocks of one file."""
  with open(os.path.join(PROJECT_DIR, path), encoding="utf-8") as reader:
    text = reader.read()
  return re.findall(re.escape(MARKER) + r"\n```python\n(.*?)```", text,
                    re.DOTALL)


def test_every_doc_has_its_examples():
  assert [len(examples(path)) for path in DOCS] == [2, 3, 1, 1, 1, 1, 3]


def test_the_readmes_examples_are_keras_mds_and_squad_mds_first():
  """Word for word, so that one leg of CI runs the README's (rerun)."""
  assert examples("README.md") == [examples("docs/keras.md")[0],
                                   examples("docs/squad.md")[0]]


# README.md's examples are docs/keras.md's and docs/squad.md's first, word
# for word (the same TensorFlow work), and the task pages' fit and predict
# what their models' tests do: one leg of CI runs them.
_RERUN = ("README.md", "docs/swag.md", "docs/squad.md", "docs/ner.md")


@pytest.mark.shared
@pytest.mark.parametrize("path", [
    pytest.param(path, marks=pytest.mark.rerun) if path in _RERUN
    else path for path in DOCS])
def test_the_examples_run_as_written(path, tmp_path, monkeypatch):
  monkeypatch.chdir(tmp_path)  # where the examples write their files
  namespace = {
      "model_dir": f"{SHARED_DIR}/reference/huggingface/bert_for_pretraining",
      "sentences": SENTENCES,
      "labels": np.array([index % 2 for index in range(len(SENTENCES))]),
      "domain_texts": SENTENCES,
      "squad_dir": (squad_dir(tmp_path)
                    if path in ("README.md", "docs/squad.md") else None),
      "ner_dir": f"{PROJECT_DIR}/tests/fixtures/token_classification/"
                 "bert_for_token_classification",
      "sparse_dir": f"{PROJECT_DIR}/tests/fixtures/sparse_encoder/"
                    "max_relu_prompts",
  }
  for block in examples(path):
    exec(compile(block, path, "exec"), namespace)  # pylint: disable=exec-used


def squad_dir(tmp_path):
  """A tiny random span labeler in the original format (run_squad's), of
  the demo vocabulary."""
  # pylint: disable=g-import-not-at-top
  import bert_tf
  from tests.support.helpers import tiny_config
  from tests.support.squad_fixtures import DEMO_VOCAB
  config = tiny_config(vocab_size=len(open(DEMO_VOCAB).readlines()))
  bert_tf.BertSpanLabeler(config).save_pretrained(
      tmp_path / "squad", format="original", vocab_file=DEMO_VOCAB)
  return tmp_path / "squad"
