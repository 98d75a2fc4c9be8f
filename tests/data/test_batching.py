import numpy as np

from bert_tf.data import batching


def test_evaluation_batches_are_padded_with_unreal_examples():
  features = {"input_ids": np.ones((5, 4), np.int32),
              "label_ids": np.arange(5, dtype=np.int32),
              "is_real_example": np.ones(5, np.int32)}
  padded = batching.pad_to_batches(features, 4)
  assert padded["input_ids"].shape == (8, 4)
  assert padded["is_real_example"].tolist() == [1] * 5 + [0] * 3
  assert padded["input_ids"][5:].sum() == 0
  batches = list(batching.prediction_batches(features, 4))
  assert [batch[batching.FEATURE_INDEX].tolist()
          for batch in batches] == [[0, 1, 2, 3], [4, 0, 0, 0]]
  assert batches[1]["is_real_example"].tolist() == [1, 0, 0, 0]


def test_training_batches_are_full_and_repeat():
  features = {"label_ids": np.arange(5, dtype=np.int32),
              "is_real_example": np.ones(5, np.int32)}
  batches = list(batching.training_dataset(features, 4, seed=0).take(3))
  assert all(batch["label_ids"].shape == (4,) for batch in batches)
  assert batching.FEATURE_INDEX not in batches[0]
  assert set(np.concatenate([batch["label_ids"] for batch in batches])) <= set(
      range(5))


def test_bucketed_batches_are_sorted_by_length_within_chunks_and_cut():
  lengths = [3, 16, 5, 1, 9, 2, 0, 7, 12, 4]
  mask = (np.arange(16) < np.array(lengths)[:, None]).astype(np.int32)
  features = {"input_mask": mask, "input_ids": mask * 7,
              "label_ids": np.arange(10, dtype=np.int32),
              "is_real_example": np.ones(10, np.int32)}
  batches = list(batching.length_bucketed_batches(features, 3, 4, 2))
  # Chunks of 2 batches (6 rows): rows 0-5, then rows 6-9.
  assert [batch[batching.FEATURE_INDEX].tolist() for batch in batches] == [
      [3, 5, 0], [2, 4, 1], [6, 9, 7], [8, 0, 0]]
  assert [batch["input_ids"].shape[1] for batch in batches] == [
      4, 16, 8, 12]
  for batch in batches:
    real = batch["is_real_example"] > 0
    rows = batch[batching.FEATURE_INDEX][real]
    np.testing.assert_array_equal(batch["label_ids"][real], rows)
    width = batch["input_mask"].shape[1]
    np.testing.assert_array_equal(batch["input_mask"][real],
                                  mask[rows, :width])
    assert mask[rows, width:].sum() == 0
  assert batches[-1]["is_real_example"].tolist() == [1, 0, 0]
