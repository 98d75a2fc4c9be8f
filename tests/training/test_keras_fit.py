"""Keras' compile/fit with the original optimizer: the same training as
run_classifier's, and a compiled model saved and resumed as a .keras file."""

import random
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from bert_tf import tokenization
from bert_tf.data import batching
from bert_tf.optimization import precision
from bert_tf.tasks.glue import examples as glue
from bert_tf.tasks.glue import features as classifier_features
from tests.support.helpers import (PROJECT_DIR, assert_checkpoints_close,
                                   random_inputs, run_script, tiny_config)
from tests.support.keyword_task import VOCAB, keyword_sentences

INPUT_NAMES = ("input_ids", "input_mask", "segment_ids")
CLASSIFIER = f"{PROJECT_DIR}/tests/fixtures/huggingface/" \
    "transformers5_classifier"
TOPIC_TEXTS = [f"text number {index} about {'cats' if index % 2 else 'dogs'}"
               for index in range(8)]


def test_keras_fit_reaches_run_classifiers_weights(tmp_path):
  """Three steps of run_classifier and three of Keras' fit, from the same
  checkpoint on the same batches (run_classifier's dataset, same --seed):
  the same weights and Adam slots, bit for bit. Dropout is on and draws
  the same masks, as both start from the same seed."""
  data_dir = tmp_path / "data"
  data_dir.mkdir()
  rows = ["sentence\tlabel"] + ["\t".join(row) for row in keyword_sentences(
      random.Random(0), 16)]
  (data_dir / "train.tsv").write_text("\n".join(rows) + "\n")
  config = tiny_config(vocab_size=len(open(VOCAB).readlines()))
  (tmp_path / "bert_config.json").write_text(config.to_json_string())
  init = bert_tf.save_checkpoint(bert_tf.BertClassifier(config, 2),
                                 str(tmp_path / "init" / "model.ckpt-0"))
  result = run_script("run_classifier.py", {
      "task_name": "SST-2", "do_train": True, "data_dir": data_dir,
      "vocab_file": VOCAB, "bert_config_file": tmp_path / "bert_config.json",
      "init_checkpoint": init, "output_dir": tmp_path / "output",
      "max_seq_length": 16, "train_batch_size": 8, "num_train_epochs": 1.5,
      "learning_rate": 1e-3, "warmup_proportion": 0.34, "seed": 1})
  assert result.returncode == 0, result.stderr[-3000:]

  task = glue.get_task("sst-2")
  features = classifier_features.convert_examples(
      glue.read_examples(task, str(data_dir), "train"), task,
      tokenization.FullTokenizer(VOCAB, do_lower_case=True), 16)
  # As run_classifier: the global seed first (the shuffle's seed is made
  # of both), then the model, then the batches.
  keras.utils.set_random_seed(1)
  model = bert_tf.BertClassifier(config, 2)
  dataset = batching.training_dataset(features, 8, seed=1).map(
      lambda batch: ({name: batch[name] for name in INPUT_NAMES},
                     batch["label_ids"]))
  bert_tf.load_checkpoint(model, init)
  model.compile(optimizer=bert_tf.create_optimizer(1e-3, 3, 1),
                loss=keras.losses.SparseCategoricalCrossentropy(
                    from_logits=True),
                metrics=["sparse_categorical_accuracy"])
  model.fit(dataset, epochs=1, steps_per_epoch=3, verbose=0)
  ours = bert_tf.save_checkpoint(model, str(tmp_path / "keras" / "model.ckpt-3"),
                                 global_step=3, optimizer=model.optimizer)
  theirs = str(tmp_path / "output" / "model.ckpt-3")
  assert len(tf.train.list_variables(ours)) == len(
      tf.train.list_variables(theirs))
  assert_checkpoints_close(ours, theirs, atol=0)


def test_a_compiled_model_resumes_from_a_keras_file(tmp_path):
  """The optimizer, its schedule, its step, slots and decay rule travel in
  the .keras file: one more step from the loaded model is the step the
  original model takes. (A span labeler without dropout: dropout's random
  state is not part of a .keras file.)"""
  config = tiny_config(hidden_dropout_prob=0.0,
                       attention_probs_dropout_prob=0.0)
  inputs = {name: value for name, value in random_inputs(config).items()
            if name in INPUT_NAMES}
  positions = np.array([[1, 2], [3, 5], [0, 0]])
  model = bert_tf.BertSpanLabeler(config)
  model.compile(optimizer=bert_tf.create_optimizer(1e-3, 10, 2),
                loss=keras.losses.SparseCategoricalCrossentropy(
                    from_logits=True),
                metrics=["sparse_categorical_accuracy"])
  model.fit(inputs, positions, epochs=2, verbose=0)
  model.save(tmp_path / "model.keras")
  loaded = keras.saving.load_model(tmp_path / "model.keras")
  optimizer = loaded.optimizer
  assert isinstance(optimizer, bert_tf.AdamWeightDecay)
  assert isinstance(optimizer._learning_rate, bert_tf.WarmupPolynomialDecay)
  assert int(optimizer.iterations) == 2
  for trained in (model, loaded):
    trained.fit(inputs, positions, epochs=1, verbose=0)
  for ours, theirs in zip(loaded.weights, model.weights):
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy(),
                                  err_msg=ours.path)


TWO_REPLICAS = """
import numpy as np, tensorflow as tf, keras
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(
    cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
import bert_tf
from tests.support.helpers import random_inputs, tiny_config
config = tiny_config(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
x = {name: value for name, value in random_inputs(config, 4).items()
     if name != "masked_lm_positions"}
y = np.array([[1, 2], [3, 5], [0, 0], [4, 6]])
initial = bert_tf.BertSpanLabeler(config).get_weights()

def fit(strategy):
  with strategy.scope():
    model = bert_tf.BertSpanLabeler(config)
    model.set_weights(initial)
    model.compile(optimizer=bert_tf.create_optimizer(1e-2, 10, 1),
                  loss=keras.losses.SparseCategoricalCrossentropy(
                      from_logits=True))
  model.fit(tf.data.Dataset.from_tensor_slices((x, y)).batch(4), epochs=3,
            verbose=0)
  return model.get_weights()

one = fit(tf.distribute.OneDeviceStrategy("/cpu:0"))
two = fit(tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]))
print(max(float(np.abs(a - b).max()) for a, b in zip(one, two)))
"""


def test_keras_fit_on_two_replicas_takes_the_one_device_steps():
  """Under a MirroredStrategy the original optimizer sums the replicas'
  gradients before clipping them (Keras' own order clips each first), so
  fit takes the steps one device takes; clipping binds here (learning rate
  1e-2, norm 1). Summing halves rounds differently from one sum, and Adam
  magnifies that on small gradients: up to 1.4e-5 apart on TensorFlow
  2.21; clipping each replica first put them 0.07 apart."""
  result = subprocess.run([sys.executable, "-c", TWO_REPLICAS],
                          cwd=PROJECT_DIR, capture_output=True, text=True,
                          check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  assert float(result.stdout.split()[-1]) < 1e-4


def fit_losses(policy=None, **arguments):
  """The loss of each of six steps of fit on one batch of TOPIC_TEXTS,
  from CLASSIFIER's weights, with the model built and fit under the global
  dtype policy `policy` (None: as it is). Dropout is on: its masks come
  from the seed, the same in every dtype. Eagerly: tracing the step would
  take several times the six steps (test_trainer's trajectory is traced)."""
  keras.utils.set_random_seed(0)
  with precision.keras_policy(policy):
    model = bert_tf.BertClassifier.from_pretrained(CLASSIFIER, **arguments)
    model.compile(learning_rate=1e-3, warmup_proportion=0.2,
                  run_eagerly=True)
    history = model.fit(TOPIC_TEXTS, np.arange(8) % 2, batch_size=8,
                        epochs=6, shuffle=False, verbose=0)
  return model, history.history["loss"]


@pytest.fixture(scope="module")
def float32_losses():
  return fit_losses()[1]


@pytest.mark.parametrize("policy, arguments", [
    ("mixed_bfloat16", {}), (None, {"dtype": "mixed_bfloat16"})],
    ids=["global_policy", "from_pretrained_dtype"])
def test_mixed_bfloat16_fits_as_float32_with_float32_state(
    float32_losses, policy, arguments):
  """A model built under Keras' global mixed_bfloat16 policy, or with
  from_pretrained's dtype, computes in bfloat16 and fits with float32
  weights and Adam slots, each step's loss within 2^-8 of float32's: one
  bfloat16 product's relative error, the bound of test_trainer's
  pretraining trajectory. Measured: 0.1% at most; the dropout masks of
  another seed move the losses 6.7%."""
  model, losses = fit_losses(policy, **arguments)
  assert keras.config.dtype_policy().name == "float32"
  assert model.compute_dtype == model.encoder.compute_dtype == "bfloat16"
  slots = [slot for variable in model.trainable_variables
           for slot in model.optimizer.slots(variable)]
  assert {variable.dtype for variable in model.weights + slots} == {
      "float32"}
  np.testing.assert_allclose(losses, float32_losses, rtol=2 ** -8, atol=0)
