"""LoRA: model.enable_lora(rank, targets) trains adapters and the task head
alone; a .keras file keeps the adapters; save_pretrained, save_checkpoint
and exports write them merged, with the adapted model's outputs."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from tests.support.helpers import PROJECT_DIR

COMMUNITY = f"{PROJECT_DIR}/tests/fixtures/community_checkpoint/biobert_style"
TEXTS = [f"text number {index} about {'cats' if index % 2 else 'dogs'}"
         for index in range(16)]
LABELS = np.array([index % 2 for index in range(16)])
PROBE = ["a cat and a dog", "the gene binds a protein"]


def adapted(rank=4, **lora_arguments):
  """A classifier with adapters, fine-tuned a little: its adapters are no
  longer zero."""
  keras.utils.set_random_seed(0)
  model = bert_tf.BertClassifier.from_pretrained(COMMUNITY, num_labels=2,
                                                 max_seq_length=16)
  model.enable_lora(rank, **lora_arguments)
  model.compile(learning_rate=1e-2)
  model.fit(TEXTS, LABELS, batch_size=4, epochs=2, verbose=0)
  return model


def adapter_values(model):
  return [weight.numpy() for weight in model.weights
          if "lora_kernel" in weight.path]


def test_only_the_adapters_and_the_head_train():
  keras.utils.set_random_seed(0)
  model = bert_tf.BertClassifier.from_pretrained(COMMUNITY, num_labels=2,
                                                 max_seq_length=16)
  frozen = {weight.path: weight.numpy() for weight in model.encoder.weights}
  model.enable_lora(4)
  config = model.config
  hidden, layers = config.hidden_size, config.num_hidden_layers
  # query and value in each layer: A [hidden, 4] and B [4, hidden]; the
  # head's [2, hidden] weights and 2 biases.
  expected = layers * 2 * (2 * hidden * 4) + 2 * hidden + 2
  assert sum(int(np.prod(weight.shape))
             for weight in model.trainable_weights) == expected
  lines = []
  model.summary(print_fn=lambda line, *_, **__: lines.append(line))
  assert f"Trainable params: {expected:,}" in "\n".join(lines)
  model.compile(learning_rate=1e-2)
  model.fit(TEXTS, LABELS, batch_size=4, verbose=0)
  for weight in model.encoder.weights:
    if weight.path in frozen:
      np.testing.assert_array_equal(weight.numpy(), frozen[weight.path],
                                    err_msg=weight.path)
  assert any(np.abs(value).max() > 0 for value in adapter_values(model))


def test_the_merged_model_computes_what_the_adapted_one_does():
  model = adapted(targets=("query", "key", "value", "attention_output",
                           "intermediate", "output"), alpha=8)
  merged = model.merge_lora()
  assert merged.lora is None and not adapter_values(merged)
  np.testing.assert_allclose(merged(PROBE)["logits"],
                             model(PROBE)["logits"], rtol=0, atol=1e-6)


def test_a_keras_file_keeps_the_adapters_and_training_goes_on(tmp_path):
  """Keras' own Dense merges its adapters into the kernel when it saves
  and zeroes them when it loads: no gradient would then reach either."""
  model = adapted()
  model.save(tmp_path / "model.keras")
  loaded = keras.saving.load_model(tmp_path / "model.keras")
  assert loaded.lora == {"rank": 4, "targets": ["query", "value"],
                         "alpha": 4}
  for ours, theirs in zip(adapter_values(loaded), adapter_values(model)):
    np.testing.assert_array_equal(ours, theirs)
  np.testing.assert_array_equal(loaded(PROBE)["logits"],
                                model(PROBE)["logits"])
  assert len(loaded.trainable_weights) == len(model.trainable_weights)
  before = adapter_values(loaded)
  loaded.compile(learning_rate=1e-2)  # the first fit's schedule has ended
  loaded.fit(TEXTS, LABELS, batch_size=4, verbose=0)
  assert all(not np.array_equal(now, then)
             for now, then in zip(adapter_values(loaded), before))


def test_files_that_leave_keras_hold_the_merged_weights(tmp_path):
  model = adapted()
  expected = model(PROBE)["logits"]
  ids = model.preprocessor(PROBE)
  prefix = bert_tf.save_checkpoint(model, str(tmp_path / "ckpt" / "model"))
  assert not [name for name, _ in tf.train.list_variables(prefix)
              if "lora" in name]
  plain = bert_tf.BertClassifier(model.config, num_labels=2)
  bert_tf.load_checkpoint(plain, prefix)
  np.testing.assert_allclose(plain(ids)["logits"], expected, atol=1e-6)
  model.save_pretrained(tmp_path / "folder")
  folder = bert_tf.load_pretrained(tmp_path / "folder").model
  np.testing.assert_allclose(folder(ids)["logits"], expected, atol=1e-6)
  model.export(str(tmp_path / "export"))
  served = tf.saved_model.load(str(tmp_path / "export"))
  assert not [variable.name for variable in served.variables
              if "lora" in variable.name]
  np.testing.assert_allclose(served.serve(tf.constant(PROBE))["logits"],
                             expected, atol=1e-6)


def test_what_lora_refuses():
  model = bert_tf.BertClassifier.from_pretrained(COMMUNITY, num_labels=2)
  with pytest.raises(ValueError, match="enable_lora: rank=0 must be"):
    model.enable_lora(0)
  with pytest.raises(ValueError, match="enable_lora: rank=33 is over the "
                     "hidden_size, 32"):
    model.enable_lora(33)
  with pytest.raises(ValueError, match=r"targets=\('queries',\); expected "
                     "some of query, key, value"):
    model.enable_lora(4, targets=("queries",))
  model.enable_lora(4)
  with pytest.raises(ValueError, match="has adapters already"):
    model.enable_lora(4)
  with pytest.raises(ValueError, match=r"quantize model.merge_lora\(\)"):
    model.quantize("int8")
  quantized = bert_tf.BertClassifier.from_pretrained(COMMUNITY, num_labels=2)
  quantized.quantize("int8")
  with pytest.raises(ValueError, match=r"the model is quantized \(int8\)"):
    quantized.enable_lora(4)


def test_a_checkpoint_loads_into_a_model_with_adapters(tmp_path):
  """Its kernels hold the adapters merged in: they load into the frozen
  kernels, and the adapters start again (B zero), as a run with
  --lora_rank resumes."""
  model = adapted()
  prefix = bert_tf.save_checkpoint(model, str(tmp_path / "model.ckpt-8"))
  other = adapted(rank=2)
  report = bert_tf.load_checkpoint(other, prefix)
  assert not report.not_in_checkpoint
  assert all(not layer.lora_kernel_b.numpy().any()
             for layer in bert_tf.checkpoints.adapters.adapted_layers(other))
  np.testing.assert_allclose(other(PROBE)["logits"], model(PROBE)["logits"],
                             atol=1e-6)
