import numpy as np
import pytest

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


@pytest.mark.parametrize("choices", [None, 4])
def test_training_batches_by_length_hold_one_bucket_each_and_are_cut(
    choices):
  """Every batch holds features of one bucket_length, cut to it (SWAG's
  [features, 4, seq] inputs too), features without a position axis are
  whole (a batch longer than its shortest bucket shows a cut), and all
  features keep coming."""
  rng = np.random.default_rng(0)
  lengths = rng.integers(1, 65, 200)
  mask = (np.arange(64) < lengths[:, None]).astype(np.int32)
  if choices:
    mask = np.repeat(mask[:, None], choices, axis=1)
  features = {"input_ids": mask * 3, "input_mask": mask,
              "label_ids": np.arange(200, dtype=np.int32),
              "is_real_example": np.ones(200, np.int32)}
  dataset = batching.training_dataset(features, 16, seed=0, by_length=True)
  assert dataset.element_spec["input_ids"].shape.as_list() == (
      [16, *mask.shape[1:-1], None])
  assert dataset.element_spec["label_ids"].shape.as_list() == [16]
  seen = set()
  for batch in dataset.take(60).as_numpy_iterator():
    rows = batch["label_ids"]
    assert len(rows) == len(batch["is_real_example"]) == 16
    length = batch["input_ids"].shape[-1]
    buckets = {batching.bucket_length(length, 64) for length in lengths[rows]}
    assert buckets == {length}
    np.testing.assert_array_equal(batch["input_mask"],
                                  mask[rows, ..., :length])
    seen.update(rows.tolist())
  assert len(seen) > 150


def test_bucket_lengths_are_few_and_pad_under_a_step():
  lengths = [batching.bucket_length(length, 512) for length in range(513)]
  assert sorted(set(lengths)) == [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112,
                                  128, 160, 192, 224, 256, 320, 384, 448, 512]
  assert all(0 <= bucketed - length < 8 for length, bucketed in
             enumerate(lengths[1:65], 1))
  assert all(0 <= bucketed - length < length / 4 for length, bucketed in
             enumerate(lengths[65:], 65))
  assert batching.bucket_length(100, 100) == 100  # capped at max_seq_length


def test_feature_lengths_end_at_the_last_real_token_of_any_sequence():
  mask = np.array([[[1, 1, 0, 0], [1, 1, 1, 0]],
                   [[0, 0, 0, 0], [0, 0, 0, 0]],
                   [[1, 0, 1, 0], [1, 0, 0, 0]]])
  assert batching.feature_lengths({"input_mask": mask}).tolist() == [3, 0, 3]
  assert batching.feature_lengths({"input_mask": mask[:, 0]}).tolist() == [
      2, 0, 3]


def test_bucketed_batches_are_sorted_by_length_within_chunks_and_cut():
  lengths = [3, 16, 5, 1, 9, 2, 0, 7, 12, 4]
  mask = (np.arange(24) < np.array(lengths)[:, None]).astype(np.int32)
  features = {"input_mask": mask, "input_ids": mask * 7,
              "label_ids": np.arange(10, dtype=np.int32),
              "is_real_example": np.ones(10, np.int32)}
  batches = list(batching.length_bucketed_batches(features, 3, 2))
  # Chunks of 2 batches (6 rows): rows 0-5, then rows 6-9.
  assert [batch[batching.FEATURE_INDEX].tolist() for batch in batches] == [
      [3, 5, 0], [2, 4, 1], [6, 9, 7], [8, 0, 0]]
  assert [batch["input_ids"].shape[1] for batch in batches] == [
      8, 16, 8, 16]
  for batch in batches:
    real = batch["is_real_example"] > 0
    rows = batch[batching.FEATURE_INDEX][real]
    np.testing.assert_array_equal(batch["label_ids"][real], rows)
    width = batch["input_mask"].shape[1]
    np.testing.assert_array_equal(batch["input_mask"][real],
                                  mask[rows, :width])
    assert mask[rows, width:].sum() == 0
  assert batches[-1]["is_real_example"].tolist() == [1, 0, 0]
  # Without chunks, all features are sorted at once.
  assert [batch[batching.FEATURE_INDEX].tolist() for batch in
          batching.length_bucketed_batches(features, 5)] == [
              [6, 3, 5, 0, 9], [2, 7, 4, 8, 1]]


def test_arrays_shaped_like_input_ids_are_cut_whatever_their_rank():
  """SWAG's [features, 4, seq] inputs and NER's per-position labels are cut
  at the sequence axis; other arrays are left whole."""
  mask = np.zeros((2, 4, 32), np.int32)
  mask[0, 2, :5] = mask[1, 0, :3] = 1
  features = {"input_ids": mask, "input_mask": mask,
              "choice_scores": np.ones((2, 4), np.float32),
              "is_real_example": np.ones(2, np.int32)}
  (batch,) = batching.length_bucketed_batches(features, 2)
  assert batch["input_ids"].shape == batch["input_mask"].shape == (2, 4, 8)
  assert batch["choice_scores"].shape == (2, 4)


def test_batches_cut_to_their_longest_feature_without_rounding_up():
  """round_up=False (a Predictor without XLA, BertEmbedder.encode): each
  batch at its longest feature's own length, not its bucket_length."""
  lengths = [3, 16, 5, 1, 9, 2, 0, 7, 12, 4]
  mask = (np.arange(24) < np.array(lengths)[:, None]).astype(np.int32)
  features = {"input_mask": mask, "input_ids": mask * 7,
              "is_real_example": np.ones(10, np.int32)}
  batches = list(batching.length_bucketed_batches(features, 4,
                                                  round_up=False))
  assert [batch["input_ids"].shape[1] for batch in batches] == [3, 9, 16]
  assert [batch[batching.FEATURE_INDEX].tolist() for batch in batches] == [
      [6, 3, 5, 0], [9, 2, 7, 4], [8, 1, 0, 0]]
