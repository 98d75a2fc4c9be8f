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
  batches = list(batching.feature_dataset(features, 4, False))
  assert [batch[batching.FEATURE_INDEX].numpy().tolist()
          for batch in batches] == [[0, 1, 2, 3], [4, 0, 0, 0]]
  assert batches[1]["is_real_example"].numpy().tolist() == [1, 0, 0, 0]
  assert batching.num_batches(features, 4) == 2


def test_training_batches_are_full_and_repeat():
  features = {"label_ids": np.arange(5, dtype=np.int32),
              "is_real_example": np.ones(5, np.int32)}
  batches = list(batching.feature_dataset(features, 4, True, seed=0).take(3))
  assert all(batch["label_ids"].shape == (4,) for batch in batches)
  assert batching.FEATURE_INDEX not in batches[0]
  assert set(np.concatenate([batch["label_ids"] for batch in batches])) <= set(
      range(5))
