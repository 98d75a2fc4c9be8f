"""LoRA: model.enable_lora(rank, targets) trains adapters and the task head
alone; a .keras file keeps the adapters; save_pretrained, save_checkpoint
and exports write them merged, with the adapted model's outputs."""

import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from bert_tf.checkpoints import conversion
from bert_tf.checkpoints.adapters import adapted_layers
from tests.support.helpers import PROJECT_DIR, tiny_config

COMMUNITY = f"{PROJECT_DIR}/tests/fixtures/community_checkpoint/biobert_style"
# transformers' BertForMaskedLM: no pooler.
MASKED_LM = f"{PROJECT_DIR}/tests/fixtures/huggingface/bert_for_masked_lm"
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


# enable_lora's refusals: Python's checks, the same on every TensorFlow
# (quantize() is tests/models/test_quantization.py's); one leg of CI runs it.
@pytest.mark.rerun
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
  for targets in (None, 5, ("query", 5), ()):
    with pytest.raises(ValueError, match=r"enable_lora: targets=.*; "
                       "expected some of query"):
      model.enable_lora(4, targets=targets)
  for alpha in ("8", 0, -1.0, float("nan"), float("inf"), True, 10**400):
    with pytest.raises(ValueError, match=r"enable_lora: alpha=.* must be a "
                       "number > 0, or None for the rank"):
      model.enable_lora(4, alpha=alpha)
  assert model.lora is None and not adapted_layers(model)
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


def test_one_target_may_be_named_alone():
  """A bare name is that one target, not its letters."""
  model = bert_tf.BertClassifier(tiny_config(), 2)
  model.enable_lora(2, targets="query", alpha=np.float32(8))
  assert model.lora == {"rank": 2, "targets": ["query"], "alpha": 8.0}
  assert isinstance(model.lora["alpha"], float)
  assert len(adapted_layers(model)) == model.config.num_hidden_layers


def trainable_state(model):
  return {weight.path: weight.trainable for weight in model.weights}


def test_a_refused_enable_lora_changes_nothing():
  """Everything is checked before anything changes: no adapter is left in
  the first block, nor the encoder frozen."""
  model = bert_tf.BertClassifier(tiny_config(), 2)
  before = trainable_state(model)
  for arguments in ({"targets": ("query", "query")},
                    {"targets": ("value", "key", "value")},
                    {"targets": ("query", "queries")}, {"alpha": "8"}):
    with pytest.raises(ValueError, match="enable_lora: "):
      model.enable_lora(2, **arguments)
    assert model.lora is None and not adapted_layers(model)
    assert trainable_state(model) == before
  with pytest.raises(ValueError, match=r"targets=\('query', 'query'\) "
                     "names 'query' twice"):
    model.enable_lora(2, targets=("query", "query"))
  model.enable_lora(2, targets=("query", "key"))
  assert len(adapted_layers(model)) == 2 * model.config.num_hidden_layers


def ids_data(config, examples=8):
  """(x, y): ids of 8 random sequences and labels for them."""
  ids = np.random.default_rng(0).integers(5, config.vocab_size, (examples, 8))
  return {"input_ids": ids.astype(np.int32)}, np.arange(examples) % 2


def with_adapters_moved(model):
  """Sets every adapter's B, which starts at zero, to 0.1: the adapted
  model's outputs then differ from the plain one's."""
  for layer in adapted_layers(model):
    layer.lora_kernel_b.assign(np.full(layer.lora_kernel_b.shape, 0.1))


@pytest.mark.parametrize("first", ["fit", "predict", "evaluate"])
def test_adapters_added_after_a_model_ran_are_used(first):
  """Keras keeps the functions it traced for a model's first fit, predict
  and evaluate, with the variables of then: enable_lora forgets them, and
  starts an optimizer that has run again (its slots are of the weights
  before)."""
  keras.utils.set_random_seed(0)
  config = tiny_config(hidden_dropout_prob=0.0,
                       attention_probs_dropout_prob=0.0)
  model = bert_tf.BertClassifier(config, 2)
  model.compile(learning_rate=1e-2)
  x, y = ids_data(config)
  getattr(model, first)(x, *([] if first == "predict" else [y]), verbose=0)
  model.enable_lora(2)
  with_adapters_moved(model)
  np.testing.assert_allclose(model.predict(x, verbose=0)["logits"],
                             model(x)["logits"], atol=1e-6)
  assert model.evaluate(x, y, verbose=0)[0] == pytest.approx(
      float(keras.losses.SparseCategoricalCrossentropy(from_logits=True)(
          y, model(x)["logits"])), rel=1e-5)
  adapters = adapter_values(model)
  model.fit(x, y, batch_size=4, verbose=0)
  assert all(not np.array_equal(now, then)
             for now, then in zip(adapter_values(model), adapters))


def test_a_pooler_the_checkpoint_lacks_trains_with_the_head(tmp_path):
  """A BertForMaskedLM folder has no pooler: the classifier's is new, and
  trains with the adapters and the head instead of staying frozen at
  random; the encoder's loaded weights stay frozen. A .keras file keeps
  which weights train, and the optimizer's slots for them."""
  config = conversion.open_model_directory(MASKED_LM, needs_vocab=False).config
  model = bert_tf.BertClassifier(config, 2)
  report = bert_tf.load_checkpoint(model, MASKED_LM)
  assert report.not_in_checkpoint == [
      "bert/pooler/dense/kernel", "bert/pooler/dense/bias", "output_weights",
      "output_bias"]
  model.enable_lora(2)
  pooler = model.encoder.pooler
  assert pooler.kernel.trainable and pooler.bias.trainable
  frozen = {weight.path: weight.numpy() for weight in model.encoder.weights
            if not weight.trainable}
  assert frozen and not any("pooler" in path for path in frozen)
  before = [weight.numpy() for weight in pooler.weights]
  model.compile(learning_rate=1e-2)
  model.fit(*ids_data(config), batch_size=4, verbose=0)
  assert all(not np.array_equal(now.numpy(), then)
             for now, then in zip(pooler.weights, before))
  for weight in model.encoder.weights:
    if weight.path in frozen:
      np.testing.assert_array_equal(weight.numpy(), frozen[weight.path])
  model.save(tmp_path / "model.keras")
  loaded = keras.saving.load_model(tmp_path / "model.keras")
  assert loaded.lora == model.lora == {"rank": 2,
                                       "targets": ["query", "value"],
                                       "alpha": 2}
  assert [weight.path for weight in loaded.trainable_weights] == [
      weight.path for weight in model.trainable_weights]
  assert [value.numpy().tolist() for value in loaded.optimizer.variables] \
      == [value.numpy().tolist() for value in model.optimizer.variables]


def test_a_frozen_encoder_takes_no_adapters():
  model = bert_tf.BertFeatureTagger(tiny_config(), 3, [-1], "concat",
                                    lstm_units=4)
  with pytest.raises(ValueError, match="BertFeatureTagger.enable_lora: "
                     "BertFeatureTagger's encoder is frozen"):
    model.enable_lora(2)


UNDER_A_STRATEGY = """
import numpy as np, tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(
    cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
import bert_tf
from tests.support.helpers import tiny_config
x = {"input_ids": np.arange(64, dtype=np.int32).reshape(8, 8) % 90 + 5}
y = np.arange(8) % 2
with tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]).scope():
  model = bert_tf.BertClassifier(tiny_config(), 2)
  model.compile(learning_rate=1e-2)
model.fit(x, y, batch_size=4, verbose=0)
model.enable_lora(2)
model.fit(x, y, batch_size=4, verbose=0)
print(max(float(np.abs(layer.lora_kernel_b.numpy()).max())
          for layer in bert_tf.checkpoints.adapters.adapted_layers(model)))
"""


def test_adapters_added_outside_the_strategy_scope_train_in_it():
  """enable_lora adds the adapters, and the optimizer it starts again, in
  the strategy the model was built in (Keras refuses to mix them)."""
  result = subprocess.run([sys.executable, "-c", UNDER_A_STRATEGY],
                          cwd=PROJECT_DIR, capture_output=True, text=True,
                          check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  assert float(result.stdout.split()[-1]) > 0
